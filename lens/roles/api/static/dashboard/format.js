// How figures are written: a figure Lens does not know (null) is a dash, never a made-up 0.
// Times read one way everywhere — 24-hour clock, the viewer's time zone, named once in the
// header (zoneName) — in tables, charts and "as of" notes alike.
const DASH = "—";
const UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

export function number(value, digits = 0) {
  if (value === null || value === undefined) return DASH;
  return value.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

export function percent(value, digits = 1) {
  return value === null || value === undefined ? DASH : `${number(value, digits)} %`;
}

export function bytes(value) {
  if (value === null || value === undefined) return DASH;
  let scaled = value;
  let unit = 0;
  while (Math.abs(scaled) >= 1024 && unit < UNITS.length - 1) {
    scaled /= 1024;
    unit += 1;
  }
  return `${number(scaled, unit === 0 ? 0 : 1)} ${UNITS[unit]}`;
}

// Bytes in GiB, as a node's memory is read ("2,015.5 GiB"), whatever its size.
export function gib(value) {
  return value === null || value === undefined ? DASH : `${number(value / 1024 ** 3, 1)} GiB`;
}

export function watts(value) {
  return value === null || value === undefined ? DASH : `${number(value, 0)} W`;
}

export function celsius(value) {
  return value === null || value === undefined ? DASH : `${number(value, 0)} °C`;
}

export function hours(value, digits = 1) {
  return value === null || value === undefined ? DASH : number(value, digits);
}

// A figure in scientific notation when it is very small or large (a learning rate: 3.0e-4).
export function scientific(value, digits = 1) {
  if (value === null || value === undefined) return DASH;
  const magnitude = Math.abs(value);
  if (magnitude !== 0 && (magnitude < 1e-2 || magnitude >= 1e6)) return value.toExponential(digits);
  return number(value, Math.max(digits, magnitude < 1 ? 3 : digits));
}

function pad(value) {
  return String(value).padStart(2, "0");
}

// The viewer's time zone, as the header names it ("Europe/Paris, UTC+01:00").
export function zoneName(at = new Date()) {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || "local time";
  const offset = -at.getTimezoneOffset();
  const sign = offset < 0 ? "-" : "+";
  const hoursPart = pad(Math.floor(Math.abs(offset) / 60));
  return `${zone}, UTC${sign}${hoursPart}:${pad(Math.abs(offset) % 60)}`;
}

// Unix seconds as the viewer's "HH:MM" (24-hour).
export function clock(seconds) {
  if (seconds === null || seconds === undefined) return DASH;
  const at = new Date(seconds * 1000);
  return `${pad(at.getHours())}:${pad(at.getMinutes())}`;
}

// Unix seconds as the viewer's "YYYY-MM-DD".
export function day(seconds) {
  const at = new Date(seconds * 1000);
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}`;
}

// Unix seconds as the viewer's "YYYY-MM-DD HH:MM".
export function when(seconds) {
  if (seconds === null || seconds === undefined) return DASH;
  return `${day(seconds)} ${clock(seconds)}`;
}

// "as of HH:MM" of a `measured` ({as_of, stale}), the day too when it is not `today`'s;
// null when never measured.
export function asOf(measured, today) {
  if (!measured || measured.as_of === null) return null;
  const sameDay = today === undefined || day(measured.as_of) === day(today);
  return `as of ${sameDay ? clock(measured.as_of) : when(measured.as_of)}`;
}

export function duration(seconds) {
  if (seconds === null || seconds === undefined) return DASH;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hoursPart = Math.floor(minutes / 60);
  if (hoursPart < 48) return `${hoursPart} h ${minutes % 60} min`;
  return `${Math.floor(hoursPart / 24)} d ${hoursPart % 24} h`;
}

// A count with its noun, plural when it is not one ("192 CPUs", "1 GPU").
export function countOf(count, what) {
  return `${number(count)} ${what}${count === 1 ? "" : "s"}`;
}

// How figures are written: a figure Lens does not know (null) is a dash, never a made-up 0.
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

export function watts(value) {
  return value === null || value === undefined ? DASH : `${number(value, 0)} W`;
}

export function celsius(value) {
  return value === null || value === undefined ? DASH : `${number(value, 0)} °C`;
}

export function hours(value, digits = 1) {
  return value === null || value === undefined ? DASH : number(value, digits);
}

function pad(value) {
  return String(value).padStart(2, "0");
}

// Unix seconds as local "YYYY-MM-DD HH:MM".
export function when(seconds) {
  if (seconds === null || seconds === undefined) return DASH;
  const at = new Date(seconds * 1000);
  const day = `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}`;
  return `${day} ${pad(at.getHours())}:${pad(at.getMinutes())}`;
}

export function duration(seconds) {
  if (seconds === null || seconds === undefined) return DASH;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hoursPart = Math.floor(minutes / 60);
  if (hoursPart < 48) return `${hoursPart} h ${minutes % 60} min`;
  return `${Math.floor(hoursPart / 24)} d ${hoursPart % 24} h`;
}

"""A small reader of Dockerfiles and .dockerignore files, for checking the image's recipe where
it cannot be built (no registry access): the instructions of each build stage as BuildKit's
parser splits them, and which context paths a .dockerignore keeps out, as
github.com/moby/patternmatcher decides it.

Dockerfile: parser directives (`# escape=`) at the top, `#` comment lines (also inside a
continued instruction), lines continued by the escape character, instructions case-insensitive,
JSON (exec) or shell form. .dockerignore: one pattern a line, `#` comments, `!` re-includes,
the last pattern matching a path or one of its parent directories decides.
"""

from __future__ import annotations

import dataclasses
import json
import re

STAGE_REF = re.compile(
    r"^(?P<image>[^\s@]+?)(?::(?P<tag>[\w][\w.-]{0,127}))?(?:@(?P<digest>\S+))?$"
)
_DIRECTIVE = re.compile(r"^#\s*(\w+)\s*=\s*(.*?)\s*$")
_VARIABLE = re.compile(r"\$(?:\{(\w+)(?::-([^}]*))?\}|(\w+))")


class DockerfileError(ValueError):
    """The file is no Dockerfile this reader understands."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Instruction:
    keyword: str  # upper case
    text: str  # the arguments as written (continuations joined)
    line: int  # where it starts, from 1

    def exec_form(self) -> list[str] | None:
        """The arguments as a JSON array of strings, or None in shell form."""
        if not self.text.startswith("["):
            return None
        try:
            value = json.loads(self.text)
        except json.JSONDecodeError:
            return None
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            return None
        return value

    def flags_and_args(self) -> tuple[dict[str, str], list[str]]:
        """`--name=value` flags (a bare `--link` is "true") and the other arguments."""
        words = self.text.split()
        flags: dict[str, str] = {}
        while words and words[0].startswith("--"):
            name, _, value = words.pop(0)[2:].partition("=")
            flags[name] = value or "true"
        rest = " ".join(words)
        as_json = Instruction(keyword=self.keyword, text=rest, line=self.line).exec_form()
        return flags, as_json if as_json is not None else words


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Stage:
    index: int
    name: str  # lower case; '' when unnamed
    base: str  # the FROM image or an earlier stage's name, ARGs substituted
    instructions: tuple[Instruction, ...]

    def all(self, keyword: str) -> list[Instruction]:
        return [i for i in self.instructions if i.keyword == keyword]


@dataclasses.dataclass(frozen=True, slots=True)
class Dockerfile:
    stages: tuple[Stage, ...]

    def stage(self, name: str) -> Stage:
        for stage in self.stages:
            if stage.name == name.lower():
                return stage
        raise KeyError(f"no stage named {name!r}")

    def chain(self, stage: Stage) -> list[Stage]:
        """`stage` and the stages it is built FROM, nearest first."""
        chain = [stage]
        names = {s.name: s for s in self.stages if s.name}
        while chain[-1].base.lower() in names:
            parent = names[chain[-1].base.lower()]
            if parent.index >= chain[-1].index:
                raise DockerfileError(f"stage {chain[-1].name!r} is FROM a later stage")
            chain.append(parent)
        return chain

    def external_base(self, stage: Stage) -> str:
        """The image `stage` finally starts from (not a stage of this file)."""
        return self.chain(stage)[-1].base

    def effective(self, stage: Stage, keyword: str) -> Instruction | None:
        """The last `keyword` instruction in force in `stage`, inherited stages included (an
        image's USER, ENTRYPOINT or CMD)."""
        for member in self.chain(stage):
            found = member.all(keyword)
            if found:
                return found[-1]
        return None


def parse(text: str) -> Dockerfile:
    """The stages of the Dockerfile `text`."""
    escape = "\\"
    lines = text.splitlines()
    start = 0
    while start < len(lines) and (directive := _DIRECTIVE.match(lines[start])):
        if directive.group(1).lower() == "escape":
            escape = directive.group(2)
            if escape not in ("\\", "`"):
                raise DockerfileError(f"line {start + 1}: escape must be \\ or `")
        start += 1
    return _stages(_instructions(lines, start, escape))


def _instructions(lines: list[str], start: int, escape: str) -> list[Instruction]:
    found: list[Instruction] = []
    pending: list[str] = []
    first = 0
    for number, raw in enumerate(lines[start:], start=start + 1):
        stripped = raw.strip()
        if stripped.startswith("#") or (not stripped and not pending):
            continue  # comments, also between continued lines, and blank lines
        if not pending:
            first = number
        continued = stripped.endswith(escape)
        pending.append(stripped[:-1].rstrip() if continued else stripped)
        if continued:
            continue
        keyword, _, rest = " ".join(p for p in pending if p).partition(" ")
        if not re.fullmatch(r"[A-Za-z]+", keyword):
            raise DockerfileError(f"line {first}: {keyword!r} is no instruction")
        found.append(Instruction(keyword=keyword.upper(), text=rest.strip(), line=first))
        pending = []
    if pending:
        raise DockerfileError("the last instruction continues past the end of the file")
    return found


def _stages(instructions: list[Instruction]) -> Dockerfile:
    args: dict[str, str] = {}  # ARGs declared before the first FROM: they may name the base
    stages: list[Stage] = []
    current: tuple[str, str, list[Instruction]] | None = None
    for instruction in instructions:
        if instruction.keyword == "ARG" and current is None:
            name, _, default = instruction.text.partition("=")
            args[name.strip()] = default.strip().strip('"')
        elif instruction.keyword == "FROM":
            if current is not None:
                stages.append(_stage(len(stages), current))
            current = (*_from(instruction, args), [])
        elif current is None:
            raise DockerfileError(f"line {instruction.line}: {instruction.keyword} before FROM")
        else:
            current[2].append(instruction)
    if current is None:
        raise DockerfileError("no FROM instruction")
    stages.append(_stage(len(stages), current))
    return Dockerfile(tuple(stages))


def _stage(index: int, parts: tuple[str, str, list[Instruction]]) -> Stage:
    base, name, instructions = parts
    return Stage(index=index, name=name, base=base, instructions=tuple(instructions))


def _from(instruction: Instruction, args: dict[str, str]) -> tuple[str, str]:
    _, words = instruction.flags_and_args()
    if len(words) == 3 and words[1].lower() == "as":
        return _substitute(words[0], args), words[2].lower()
    if len(words) == 1:
        return _substitute(words[0], args), ""
    raise DockerfileError(f"line {instruction.line}: FROM {instruction.text!r}")


def _substitute(word: str, args: dict[str, str]) -> str:
    def value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(3)
        return args.get(name) or match.group(2) or ""

    return _VARIABLE.sub(value, word)


# --- .dockerignore ------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class _Pattern:
    regex: re.Pattern[str]
    exclusion: bool  # a `!` line: re-includes what it matches


class DockerIgnore:
    """Which context paths (relative, `/`-separated) a .dockerignore keeps out."""

    def __init__(self, text: str) -> None:
        self._patterns: list[_Pattern] = []
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            exclusion = line.startswith("!")
            pattern = _clean(line[1:].strip() if exclusion else line)
            if pattern:
                self._patterns.append(_Pattern(_compile(pattern), exclusion))

    def excluded(self, path: str) -> bool:
        """Whether `path` stays out of the context: the last pattern matching it or one of its
        parent directories decides."""
        parts = _clean(path).split("/")
        candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        excluded = False
        for pattern in self._patterns:
            if pattern.exclusion != excluded:
                continue  # it could not change the verdict
            if any(pattern.regex.match(candidate) for candidate in candidates):
                excluded = not pattern.exclusion
        return excluded


def _clean(path: str) -> str:
    """filepath.Clean, relative to the context root."""
    parts: list[str] = []
    for part in path.replace("\\", "/").split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                parts.pop()
            continue
        parts.append(part)
    return "/".join(parts)


def _compile(pattern: str) -> re.Pattern[str]:
    out = ["^"]
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**", i):
            i += 2
            if pattern.startswith("/", i):
                i += 1  # `**/` is `**`
            out.append(".*" if i >= len(pattern) else "(.*/)?")
            continue
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            end = pattern.find("]", i + 1)
            if end < 0:
                raise DockerfileError(f".dockerignore: unclosed [ in {pattern!r}")
            out.append(pattern[i : end + 1])
            i = end
        elif ch == "\\" and i + 1 < len(pattern):
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(ch))
        i += 1
    out.append("$")
    return re.compile("".join(out))

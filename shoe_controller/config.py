"""The table's configuration: one TOML file, validated on load into msgspec Structs.

Sections: ``[table]``, ``[rules]``, ``[paytable]``, ``[bet_availability]`` (this module
and :mod:`shoe_controller.game.rules`), and the sections of the other parts of the
product, each validated by the Struct its owner defines (every field defaulted, unknown
keys refused): ``[insurance]``, ``[analytics]``, ``[vision]``, ``[camera]``,
``[barcode]``, ``[serial]``, ``[gpio]``, ``[mqtt]``, ``[journal]``, ``[display]``,
``[simulate]``, ``[metrics]``. A missing section or key takes its default.

Any problem is a :class:`ConfigError` naming the file, the key and what was wrong:

>>> load_config_text('[rules]\\ndecks = "eight"\\n', "config.toml")
Traceback (most recent call last):
...
shoe_controller.config.ConfigError: config.toml: [rules] decks: expected an integer 1-16, got ...
>>> cfg = load_config_text('[table]\\nid = "vip-3"\\n[paytable]\\ntie = 9\\n')
>>> cfg.table.id, cfg.rules.decks, cfg.rules.paytable.tie
('vip-3', 8, 9.0)
"""

from __future__ import annotations

import importlib
import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Final

import msgspec

from shoe_controller.game.rules import BetAvailability, Paytable, Rules

__all__ = [
    "MAX_CONFIG_BYTES",
    "MAX_VALUE_CHARS",
    "SECTIONS",
    "Config",
    "ConfigError",
    "TableConfig",
    "check_config_text",
    "example_toml",
    "load_config",
    "load_config_text",
    "read_config_text",
    "reference_markdown",
    "section_types",
]


class TableConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``[table]``: who this table is."""

    #: Table id: names the MQTT topics (``shoe/<id>/...``) and the journal's table.
    id: Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9_-]{1,64}$")] = "table-1"
    #: A human name for displays and logs (free text).
    name: str = ""


#: section -> (module, Struct name) of the section's owner. Imported when loading; a
#: module that is not there (yet) leaves its section as a plain table (see Config.raw).
SECTIONS: Final[dict[str, tuple[str, str]]] = {
    "table": ("shoe_controller.config", "TableConfig"),
    "rules": ("shoe_controller.game.rules", "Rules"),
    "paytable": ("shoe_controller.game.rules", "Paytable"),
    "bet_availability": ("shoe_controller.game.rules", "BetAvailability"),
    "insurance": ("shoe_controller.game.insurance", "InsuranceConfig"),
    "analytics": ("shoe_controller.game.protection", "AnalyticsConfig"),
    "vision": ("shoe_controller.vision.config", "VisionConfig"),
    "camera": ("shoe_controller.vision.config", "CameraConfig"),
    "barcode": ("shoe_controller.vision.config", "BarcodeConfig"),
    "serial": ("firmware_bridge.config", "SerialConfig"),
    "gpio": ("shoe_controller.dealer.config", "GpioConfig"),
    "mqtt": ("shoe_controller.publish.config", "MqttConfig"),
    "journal": ("shoe_controller.publish.config", "JournalConfig"),
    "display": ("shoe_controller.display.config", "DisplayConfig"),
    "simulate": ("shoe_controller.sim", "SimulateConfig"),
    "metrics": ("shoe_controller.metrics", "MetricsConfig"),
}

#: keys of [rules] that live in their own sections
_OWN_SECTIONS: Final = ("paytable", "bet_availability", "insurance")


def section_types() -> dict[str, type | None]:
    """section -> its Struct type, or None where the owning module does not define it."""
    out: dict[str, type | None] = {}
    for section, (module, name) in SECTIONS.items():
        try:
            out[section] = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            out[section] = None
    return out


#: A configuration file larger than this is refused unread (a table's file is a few kB).
MAX_CONFIG_BYTES: Final = 1024 * 1024
#: No error message echoes more than this many characters of a value (or a key's name).
MAX_VALUE_CHARS: Final = 80


def clip(text: str, limit: int = MAX_VALUE_CHARS) -> str:
    """``text`` for an error message: at most ``limit`` characters (then ``...`` and the
    full length), on one line.

    >>> clip("short")
    'short'
    >>> clip("x" * 1000)[75:]
    'xxxxx... (1000 characters)'
    """
    text = text.replace("\r", "\\r").replace("\n", "\\n")
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


class ConfigError(ValueError):
    """A configuration problem, as ONE line: ``file: [section] key: problem``.

    Every configuration error of the product is made here (``config check`` prints these
    lines): the section and key names are clipped to :data:`MAX_VALUE_CHARS`, the whole
    line holds no newline, and values quoted in ``problem`` come through :func:`clip`.

    >>> str(ConfigError("t.toml", "expected an integer", "rules", "decks"))
    't.toml: [rules] decks: expected an integer'
    """

    def __init__(self, file: str, problem: str, section: str | None = None,
                 key: str | None = None) -> None:
        section = clip(section) if section is not None else None
        key = clip(key) if key is not None else None
        self.file, self.section, self.key = file, section, key
        self.problem = " ".join(problem.split())  # one line, whatever a parser said
        where = f"[{section}]" if section else ""
        if key:
            where += f" {key}"
        super().__init__(f"{file}: {where + ': ' if where else ''}{self.problem}")


@dataclass(frozen=True)
class Config:
    """A validated configuration. ``rules`` is the game's :class:`Rules` with the
    ``[paytable]``, ``[bet_availability]`` and ``[insurance]`` sections folded in. Each
    other section is an instance of its owner's Struct (defaults where absent); ``raw``
    keeps the plain table of any section whose Struct is not available."""

    table: TableConfig = field(default_factory=TableConfig)
    rules: Rules = field(default_factory=Rules)
    insurance: Any = None
    analytics: Any = None
    vision: Any = None
    camera: Any = None
    barcode: Any = None
    serial: Any = None
    gpio: Any = None
    mqtt: Any = None
    journal: Any = None
    display: Any = None
    simulate: Any = None
    metrics: Any = None
    source: str = "<defaults>"
    raw: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def paytable(self) -> Paytable:
        return self.rules.paytable

    @property
    def bet_availability(self) -> BetAvailability:
        return self.rules.bet_availability


# ------------------------------------------------------------------ error messages

_KIND_WORDS: Final = {
    "int": "an integer",
    "float": "a number",
    "str": "text",
    "bool": "true or false",
    "list": "a list",
    "array": "a list",
    "object": "a table",
    "null": "nothing",
}


def _describe_type(t: msgspec.inspect.Type) -> str:
    """What a value of type ``t`` must be, in words ("an integer 1-16", "one of ...")."""
    mi = msgspec.inspect
    if isinstance(t, mi.LiteralType):
        return "one of " + ", ".join(repr(v) for v in t.values)
    if isinstance(t, mi.UnionType):
        parts = [_describe_type(x) for x in t.types if not isinstance(x, mi.NoneType)]
        return " or ".join(parts) if parts else "nothing"
    if isinstance(t, mi.IntType | mi.FloatType):
        word = "an integer" if isinstance(t, mi.IntType) else "a number"
        lo = t.ge if t.ge is not None else t.gt
        hi = t.le if t.le is not None else t.lt
        if lo is not None and hi is not None:
            return f"{word} {lo:g}-{hi:g}"
        if lo is not None:
            return f"{word} >= {lo:g}" if t.ge is not None else f"{word} > {lo:g}"
        if hi is not None:
            return f"{word} <= {hi:g}" if t.le is not None else f"{word} < {hi:g}"
        return word
    if isinstance(t, mi.StrType):
        return "text" + (f" matching {t.pattern}" if t.pattern else "")
    if isinstance(t, mi.BoolType):
        return "true or false"
    if isinstance(t, mi.TupleType):
        return f"a list of {len(t.item_types)} values ({_describe_type(t.item_types[0])})"
    if isinstance(t, mi.ListType | mi.VarTupleType | mi.SetType):
        return f"a list of {_describe_type(t.item_type)}"
    if isinstance(t, mi.StructType | mi.DictType):
        return "a table"
    return type(t).__name__.removesuffix("Type").lower()


def _field_type(struct: type, path: list[str]) -> msgspec.inspect.Type | None:
    return _field_type_in(msgspec.inspect.type_info(struct), path)


def _field_type_in(t: Any, path: list[str]) -> msgspec.inspect.Type | None:
    for i, part in enumerate(path):
        if isinstance(t, msgspec.inspect.UnionType):
            inner = [x for x in t.types if not isinstance(x, msgspec.inspect.NoneType)]
            if len(inner) != 1:
                return None
            return _field_type_in(inner[0], path[i:])
        if isinstance(t, msgspec.inspect.StructType):
            t = next((f.type for f in t.fields if f.encode_name == part), None)
            if t is None:
                return None
        elif isinstance(t, msgspec.inspect.DictType):
            t = t.value_type
        elif isinstance(t, msgspec.inspect.ListType | msgspec.inspect.VarTupleType):
            t = t.item_type
        elif isinstance(t, msgspec.inspect.TupleType) and part.isdigit():
            t = t.item_types[int(part)] if int(part) < len(t.item_types) else None

        else:
            return None
    return t


def _lookup(raw: Any, path: list[str]) -> Any:
    for part in path:
        if isinstance(raw, dict):
            raw = raw.get(part)
        elif isinstance(raw, list) and part.isdigit() and int(part) < len(raw):
            raw = raw[int(part)]
        else:
            return None
    return raw


def _got(value: Any) -> str:
    """A value as an error message quotes it: never more than MAX_VALUE_CHARS of it.

    >>> _got(10 ** 200)
    'an integer of 201 digits'
    >>> _got("ab" * 100)[:20], len(_got("ab" * 100)) < 120
    ("'abababababababababa", True)
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, int) and abs(value) >= 10 ** 30:
        return f"an integer of {_digits(value)} digits"
    if isinstance(value, list):
        if _depth(value, 4) >= 4:
            return "a list"
        text = repr(value)
        return text if len(text) <= 60 else "a list"
    return clip(repr(value))


def _digits(value: int) -> int:
    """Decimal digits of ``value`` without converting it to text (which Python refuses
    beyond 4300 digits)."""
    n = max(1, int(abs(value).bit_length() * 0.30102999566398))
    while 10 ** n <= abs(value):
        n += 1
    while n > 1 and 10 ** (n - 1) > abs(value):
        n -= 1
    return n


def _depth(value: Any, stop: int) -> int:
    """How deeply tables and lists nest in ``value`` (a scalar: 0), counted without
    recursion, up to ``stop`` (then ``stop``)."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict | list):
            d += 1
            if d >= stop:
                return stop
            deepest = max(deepest, d)
            stack.extend((x, d) for x in (v.values() if isinstance(v, dict) else v))
    return deepest


def schema_depth() -> int:
    """How deeply the configuration's schema nests tables and lists (the file's root
    table counts one, each section another): deeper input is refused unread.

    >>> schema_depth() >= 3
    True
    """
    mi = msgspec.inspect

    def depth(t: Any, seen: tuple[type, ...]) -> int:
        if isinstance(t, mi.UnionType):
            return max((depth(x, seen) for x in t.types), default=0)
        if isinstance(t, mi.StructType):
            if t.cls in seen:
                return 1
            return 1 + max((depth(f.type, (*seen, t.cls)) for f in t.fields), default=0)
        if isinstance(t, mi.DictType):
            return 1 + depth(t.value_type, seen)
        if isinstance(t, mi.ListType | mi.VarTupleType | mi.SetType | mi.FrozenSetType):
            return 1 + depth(t.item_type, seen)
        if isinstance(t, mi.TupleType):
            return 1 + max((depth(x, seen) for x in t.item_types), default=0)
        if isinstance(t, mi.AnyType):
            return 1  # a free-form section: one table of values
        return 0

    deepest = 1
    for struct in section_types().values():
        if struct is not None:
            deepest = max(deepest, depth(mi.type_info(struct), ()))
    return 1 + deepest


_AT: Final = re.compile(r"^(?P<msg>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.S)


def _validation_error(file: str, section: str, struct: type, raw: dict[str, Any],
                      exc: msgspec.ValidationError) -> ConfigError:
    m = _AT.match(str(exc))
    msg = m.group("msg") if m else str(exc)
    path = [p for p in re.split(r"\.|\[|\]", m.group("path") or "") if p] if m else []
    unknown = re.match(r"Object contains unknown field `(.+)`", msg)
    if unknown:
        path.append(unknown.group(1))
        parent = _field_type(struct, path[:-1])
        known = (
            ", ".join(f.encode_name for f in parent.fields)
            if isinstance(parent, msgspec.inspect.StructType)
            else ""
        )
        return ConfigError(file, f"unknown key (known keys: {known})", section, ".".join(path))
    if not path:  # a check across fields of the section (its Struct's own message)
        return ConfigError(file, msg, section)
    ftype = _field_type(struct, path)
    key = "".join(f"[{p}]" if p.isdigit() else f".{p}" for p in path).lstrip(".")
    if ftype is None:
        return ConfigError(file, msg[:1].lower() + msg[1:], section, key)
    problem = f"expected {_describe_type(ftype)}, got {_got(_lookup(raw, path))}"
    if not msg.startswith(("Expected `", "Invalid enum value")):  # e.g. a length
        problem += f" ({msg[:1].lower() + msg[1:]})"
    return ConfigError(file, problem, section, key)


# ------------------------------------------------------------------ loading


def _convert(file: str, section: str, struct: type, raw: Any) -> Any:
    if not isinstance(raw, dict):
        raise ConfigError(file, f"expected a table [{section}], got {_got(raw)}", section)
    try:
        return msgspec.convert(raw, struct)
    except msgspec.ValidationError as exc:
        raise _validation_error(file, section, struct, raw, exc) from None


def load_config_text(text: str, file: str = "<config>") -> Config:
    """Validate configuration TOML text (``file`` names it in errors).

    >>> load_config_text("[tabel]\\nid = 'x'\\n", "t.toml")
    Traceback (most recent call last):
    ...
    shoe_controller.config.ConfigError: t.toml: [tabel]: unknown section (known sections: ...)
    """
    errors: list[ConfigError] = []
    config = _load(text, file, errors, first_only=True)
    if errors:
        raise errors[0]
    assert config is not None
    return config


def check_config_text(text: str, file: str = "<config>") -> tuple[Config | None,
                                                                   list[ConfigError]]:
    """Every problem of configuration TOML text, not just the first: ``(config, errors)``.
    Within a section, a key found wrong is left out and the section validated again, so
    each bad key is named; ``config`` is what is left (bad keys at their defaults, for
    further checks such as the files it names), None when not even that could be built
    (invalid TOML, a check across sections). Any error means the file is refused.

    >>> _, errors = check_config_text('[rules]\\ndecks = 0\\nburn = "x"\\n[tabel]\\n', "t.toml")
    >>> [f"{e.section} {e.key}" for e in errors]
    ['tabel None', 'rules decks', 'rules burn']
    """
    errors: list[ConfigError] = []
    return _load(text, file, errors, first_only=False), errors


def _convert_all(file: str, section: str, struct: type, raw: Any,
                 errors: list[ConfigError], first_only: bool) -> Any:
    """:func:`_convert`, collecting errors; a bad key is dropped and the rest tried again
    (at most once per key), so every bad key of the section is reported."""
    if not isinstance(raw, dict):
        errors.append(ConfigError(file, f"expected a table [{section}], got {_got(raw)}",
                                  section))
        return None
    raw = dict(raw)
    for _ in range(len(raw) + 1):
        try:
            return _convert(file, section, struct, raw)
        except ConfigError as exc:
            errors.append(exc)
            top = (exc.key or "").split(".")[0].split("[")[0]
            if first_only or top not in raw:
                return None  # a check across keys, or nothing left to drop
            del raw[top]
    return None


def _parse(text: str, file: str) -> dict[str, Any]:
    """The TOML of a configuration file, or ONE ConfigError: too large, nested more
    deeply than the schema, not TOML (a parser's RecursionError or its refusal of a
    100,000-digit integer included: never a traceback)."""
    size = len(text.encode("utf-8", "surrogatepass")) if len(text) > MAX_CONFIG_BYTES // 4 \
        else len(text)
    if size > MAX_CONFIG_BYTES:
        raise ConfigError(file, f"{size} bytes: larger than the {MAX_CONFIG_BYTES} bytes "
                                "(1 MiB) a configuration file may be")
    limit = schema_depth()
    found = _scan(text, limit)
    if found is not None:
        what, section, key = found
        if what == "digits":
            raise ConfigError(file, f"a number of more than {_MAX_DIGITS} digits: no "
                                    "setting takes one", section, key)
        raise ConfigError(file, f"nested more deeply than any setting ({limit} levels "
                                "of tables and lists at most)", section, key)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(file, f"not valid TOML: {clip(str(exc), 200)}") from None
    except RecursionError:
        raise ConfigError(file, f"nested more deeply than any setting ({limit} levels of "
                                "tables and lists at most)") from None
    except ValueError as exc:  # e.g. "Exceeds the limit (4300 digits) for integer ..."
        raise ConfigError(file, f"not valid TOML: {clip(str(exc), 120)}") from None
    if _depth(data, limit + 1) > limit:
        section = next((s for s, v in data.items() if _depth(v, limit) >= limit), None)
        raise ConfigError(file, f"nested more deeply than any setting ({limit} levels of "
                                "tables and lists at most)", section)
    return data


#: The longest run of digits a value may have (the parser refuses over 4300, slowly).
_MAX_DIGITS: Final = 100


def _scan(text: str, limit: int) -> tuple[str, str | None, str | None] | None:
    """What the parser must never see, found by scanning the text (the parser recurses
    once per nesting level, is quadratic in a header's dotted parts, and converts a digit
    string of any length): ``("depth", section, key)`` where tables, dotted names or
    inline arrays nest beyond ``limit``, ``("digits", section, key)`` for a number of
    more than :data:`_MAX_DIGITS` digits; None when neither. Strings and comments are
    skipped (only roughly: the parser has the last word on what is valid).

    >>> _scan("[rules]\\ndecks = [[[[[[8]]]]]]\\n", 5)
    ('depth', 'rules', 'decks')
    >>> _scan("[a.b.c.d.e.f]\\n", 5), _scan("[rules]\\ndecks = 8\\n", 5)
    (('depth', 'a', None), None)
    """
    inline = max(1, limit - 2)
    depth, section, key = 0, None, None
    header_parts = 1
    digits = 0
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if c.isdigit():
            digits += 1
            if digits > _MAX_DIGITS:
                return "digits", section, key
            i += 1
            line_start = False
            continue
        digits = 0
        if c == "\n":
            line_start = True
            i += 1
            continue
        if c in " \t\r":
            i += 1
            continue
        if c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if c in "\"'":
            quote = text[i:i + 3] if text[i:i + 3] in ('"""', "'''") else c
            j = i + len(quote)
            while j < n:
                if quote[0] == '"' and text[j] == "\\":
                    j += 2
                    continue
                if text.startswith(quote, j):
                    break
                if len(quote) == 1 and text[j] == "\n":
                    break
                j += 1
            i = j + len(quote)
            line_start = False
            continue
        if line_start and depth == 0:
            line_start = False
            if c == "[":
                end = text.find("\n", i)
                header = text[i:n if end < 0 else end].strip("[] \t\r")
                section, key = header.split(".")[0].strip().strip("\"'") or None, None
                header_parts = header.count(".") + 1
                if header_parts > limit - 1:
                    return "depth", section, None
                i = n if end < 0 else end
                continue
            m = re.match(r"[^=\n]*", text[i:i + 4096])
            key = m.group(0).strip() if m else None
            if key and header_parts + key.count(".") + 1 > limit:
                return "depth", section, key.split(".")[0]
            i += len(m.group(0)) if m else 1
            continue
        line_start = False
        if c in "[{":
            depth += 1
            if depth > inline:
                return "depth", section, key
        elif c in "]}":
            depth = max(0, depth - 1)
        i += 1
    return None


def read_config_text(path: str | Path) -> str:
    """A configuration file's text, read without ever holding more than
    :data:`MAX_CONFIG_BYTES` (+1) of it: ConfigError when it is larger, not UTF-8 or a
    directory; FileNotFoundError when it does not exist."""
    p = Path(path)
    try:
        with p.open("rb") as f:
            raw = f.read(MAX_CONFIG_BYTES + 1)
            if len(raw) > MAX_CONFIG_BYTES:
                size = max(p.stat().st_size, len(raw))
                raise ConfigError(str(path), f"{size} bytes: larger than the "
                                  f"{MAX_CONFIG_BYTES} bytes (1 MiB) a configuration "
                                  "file may be")
    except IsADirectoryError:
        raise ConfigError(str(path), "is a directory, not a file") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(str(path), f"not UTF-8 text ({exc.reason})") from None


def _load(text: str, file: str, errors: list[ConfigError], first_only: bool) -> Config | None:
    try:
        data = _parse(text, file)
    except ConfigError as exc:
        errors.append(exc)
        return None
    types = section_types()
    for section in data:
        if section not in SECTIONS:
            errors.append(ConfigError(
                file, f"unknown section (known sections: {', '.join(SECTIONS)})", section))
            if first_only:
                return None
    values: dict[str, Any] = {}
    raw_sections: dict[str, dict[str, Any]] = {}
    for section, struct in types.items():
        raw = data.get(section, {})
        if struct is None:
            if not isinstance(raw, dict):
                errors.append(ConfigError(file, f"expected a table, got {_got(raw)}", section))
                if first_only:
                    return None
                raw = {}
            values[section] = raw
            raw_sections[section] = raw
            continue
        if section == "rules" and isinstance(raw, dict):
            own = [key for key in _OWN_SECTIONS if key in raw]
            for key in own:
                errors.append(ConfigError(file, f"put it in its own [{key}] section",
                                          section, key))
                if first_only:
                    return None
            raw = {k: v for k, v in raw.items() if k not in own}
        values[section] = _convert_all(file, section, struct, raw, errors, first_only)
        if values[section] is None:
            if first_only:
                return None
            values[section] = struct()  # reported; its defaults stand in
    fold = {"paytable": values.pop("paytable"),
            "bet_availability": values.pop("bet_availability")}
    if not isinstance(values["insurance"], dict):
        fold["insurance"] = values["insurance"]  # also kept as cfg.insurance
    rules = msgspec.structs.replace(values.pop("rules"), **fold)
    ins = rules.insurance
    if ins.enabled and ins.reveal == "button" and rules.confirm != "button":
        errors.append(ConfigError(
            file,
            'reveal buttons need [rules] confirm = "button" (the round must stay open for '
            "the reveals until the dealer confirms it)",
            "insurance",
            "reveal",
        ))
        if first_only:
            return None
    return Config(rules=rules, source=file, raw=raw_sections, **values)


def load_config(path: str | Path) -> Config:
    """Load and validate a configuration file; ConfigError names the file and the key.

    Raises FileNotFoundError when the file does not exist.
    """
    return load_config_text(read_config_text(path), str(path))


def config_to_dict(config: Config) -> dict[str, Any]:
    """The effective configuration (defaults filled in) as plain data, by section."""
    out: dict[str, Any] = {"table": msgspec.to_builtins(config.table)}
    rules = msgspec.to_builtins(config.rules)
    out["paytable"] = rules.pop("paytable")
    out["bet_availability"] = rules.pop("bet_availability")
    out["insurance"] = rules.pop("insurance", None)
    out["rules"] = rules
    for section in SECTIONS:
        if section not in out:
            out[section] = msgspec.to_builtins(getattr(config, section))
    return {s: out[s] for s in SECTIONS}


# ------------------------------------------------------------------ example file


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v) if not isinstance(v, float) or v != int(v) or abs(v) >= 1e16 else (
            f"{v:.1f}"
        )
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list | tuple):
        if v and all(isinstance(x, dict) for x in v):  # a table of rows: one per line
            return "[\n" + "".join(f"    {_toml_value(x)},\n" for x in v) + "]"
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"cannot write {v!r} as TOML")


def _section_defaults(section: str, struct: type) -> dict[str, Any]:
    """A section's defaults as plain values; ``[rules]`` without the sections folded into it."""
    defaults = msgspec.to_builtins(struct())
    if section == "rules":
        for key in _OWN_SECTIONS:
            defaults.pop(key, None)
    return defaults


def _field_comments(struct: type) -> dict[str, list[str]]:
    """Comments written just above each field in the Struct's source (``#:`` or ``#``)."""
    import inspect

    try:
        lines = inspect.getsource(struct).splitlines()
    except (OSError, TypeError):
        return {}
    out: dict[str, list[str]] = {}
    pending: list[str] = []
    for line in lines[1:]:
        s = line.strip()
        if s.startswith("#"):
            pending.append(s.lstrip("#:").strip())
            continue
        m = re.match(r"^(\w+)\s*:", s)
        if m and line.startswith("    ") and not line.startswith("     ") and pending:
            out[m.group(1)] = pending
        pending = []
    return out


#: (section, key) -> (value, why): where the example file departs from the default.
#: ``confirm`` defaults to "auto" (replay files and tests without a confirm button), but
#: a casino table needs "button" (README): the example is what operators copy.
EXAMPLE_OVERRIDES: Final[dict[tuple[str, str], tuple[Any, str]]] = {
    ("rules", "confirm"): ("button", 'The default is "auto"; casino tables need "button" '
                           "(`config check` warns about auto)."),
}


def example_toml() -> str:
    """A configuration file with every key of every section at its default, commented
    (what ``shoe-controller config example`` prints; examples/table.toml is this), but
    for the casino-safe choices of :data:`EXAMPLE_OVERRIDES`."""
    types = section_types()
    out = [
        "# Smart shoe controller: table configuration.",
        "# Every key is shown at its default, except where a comment says why not;",
        "# delete what you do not change.",
        "# Check a file with: shoe-controller config check FILE",
        "",
    ]
    for section, struct in types.items():
        if struct is None:
            out += [f"[{section}]", "# (no settings defined yet)", ""]
            continue
        doc = (struct.__doc__ or "").strip()
        if doc:
            out += ["# " + line.strip() if line.strip() else "#" for line in doc.splitlines()]
        out.append(f"[{section}]")
        comments = _field_comments(struct)
        defaults = _section_defaults(section, struct)
        for key, value in defaults.items():
            for c in comments.get(key, []):
                out.append(f"# {c}" if c else "#")
            if (section, key) in EXAMPLE_OVERRIDES:
                value, why = EXAMPLE_OVERRIDES[(section, key)]
                out.append(f"# {why}")
            if value is None:
                out.append(f"# {key} =    (unset by default)")
            else:
                out.append(f"{key} = {_toml_value(value)}")
        out.append("")
    return "\n".join(out)


_REFERENCE_HEAD: Final = """# Configuration

One TOML file configures a table. `shoe_controller.config.load_config(path)` reads and
validates it into a `Config` (the daemon refuses to start on any problem); sections and
keys that are left out take their defaults.

```
shoe-controller config check /etc/shoe-controller/table.toml  # OK + summary, exit 0
shoe-controller config check --json table.toml    # the effective config, defaults filled in
shoe-controller config example > table.toml       # every key at its default, commented
shoe-controller config reference > docs/config.md # this page
```

`examples/table.toml` is the output of `config example`: every section, every key, every
default, with the comments from the Structs' source. Regenerate it when a section's
Struct changes (the test `tests/test_config.py` fails when a key is missing from it or a
default differs).

Errors name the file, the section and key, and what was wrong, and `config check` exits 2:

```
config: table.toml: [rules] decks: expected an integer 1-16, got 'eight'
config: table.toml: [rules] burn: expected one of 'decks', 'first_card', 'fixed', 'none', \
got 'often'
config: table.toml: [gpio] led_tyi: unknown key (known keys: led_player_draws, ...)
config: table.toml: [tabel]: unknown section (known sections: table, rules, ...)
config: table.toml: [camera] roi: expected a list of 4 values (an integer >= 0), got [1, 2]
config: table.toml: not valid TOML: Invalid value (at line 1, column 5)
config: table.toml: [rules] decks: nested more deeply than any setting (5 levels ...)
config: table.toml: 209715200 bytes: larger than the 1048576 bytes (1 MiB) a ...
```

Every error is one line (never a traceback), and quotes at most 80 characters of a value
or a name. A file over 1 MiB is refused unread; so are arrays, inline tables and dotted
names nested more deeply than the schema and numbers of more than 100 digits (before the
TOML parser, which would recurse, take quadratic time or convert them, sees them).
`ConfigError` (`shoe_controller/config.py`) is the one place these lines are formatted.

In Python: `cfg.table.id`, `cfg.rules` (the game `Rules`, with `[paytable]`,
`[bet_availability]` and `[insurance]` folded in as `cfg.rules.paytable`,
`cfg.rules.bet_availability`, `cfg.rules.insurance`),
and one attribute per other section holding its owner's Struct (`cfg.mqtt.host`,
`cfg.gpio.led_fault`, ...). Each section is validated by the Struct its owner defines
(every field defaulted, unknown keys refused), imported from the module listed below; a
module that does not exist leaves its section as a plain table in `cfg.raw[section]`
(and `config check` says which sections were not validated).

TOML cannot write "none": keys whose default is unset are shown commented out; leave
them out to keep them unset.

## Sections and keys
"""


def reference_markdown() -> str:
    """docs/config.md: every section, key, default and meaning, from the Structs (what
    ``shoe-controller config reference`` prints)."""
    out = [_REFERENCE_HEAD]
    for section, struct in section_types().items():
        module, name = SECTIONS[section]
        out.append(f"### [{section}]\n")
        if struct is None:
            out.append(f"No settings defined yet (`{module}.{name}` does not exist); the "
                       "section is accepted as a plain table.\n")
            continue
        out.append(f"Struct: `{module}.{name}`.\n")
        doc = (struct.__doc__ or "").strip()
        if doc:
            out.append(" ".join(line.strip() for line in doc.splitlines()) + "\n")
        out.append("| key | default | meaning |\n|---|---|---|")
        comments = _field_comments(struct)
        defaults = _section_defaults(section, struct)
        for key, value in defaults.items():
            if isinstance(value, list | tuple) and value and isinstance(value[0], dict):
                shown = f"{len(value)} rows (see examples/table.toml)"
            else:
                shown = "(unset)" if value is None else f"`{_toml_value(value)}`"
            meaning = " ".join(comments.get(key, [])).replace("|", "\\|") or "(as above)"
            out.append(f"| `{key}` | {shown} | {meaning} |")
        out.append("")
    return "\n".join(out)


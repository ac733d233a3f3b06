"""Reading a file of settings the user gives (a hosts inventory, a builds file) so that
every malformed file is one line naming the file, the key and what it takes, and no
file can keep the loader busy or exhaust the stack.

YAML is the risky one: an alias repeats a node without copying it, so ten nested
levels of ten aliases each stand for 10^10 nodes that anything walking the loaded
document (our inventory reader included) visits one by one, and an alias inside its
own anchor makes a structure that contains itself. Before anything is built, the
events are read (PyYAML's parser is a loop, not a recursion) to bound the nesting, and
the composed nodes are counted as if every alias were expanded, remembering each
node's count, so the check is linear in the file however big the expansion would be.
"""

from pathlib import Path

import yaml

# An inventory is a few groups of a few hosts: these are generous for that and still
# small enough that no file can keep the loader or a walk over its result busy.
MAX_YAML_DEPTH = 32
MAX_YAML_NODES = 100_000  # nodes of the document with every alias expanded


class ConfigError(ValueError):
    """A file of settings that cannot be used, said in one line."""


def read_text(path: Path, what: str) -> str:
    """The file's text, or one line: unreadable, binary (a NUL byte), or not UTF-8."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read {what} {path}: {exc.strerror}") from None
    nul = data.find(b"\0")
    if nul >= 0:
        raise ConfigError(f"{what} {path} is a binary file (a NUL byte at offset {nul}), not text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{what} {path} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
                          f"{exc.start})") from None


def load_yaml(text: str, path: Path, what: str) -> object:
    """YAML's plain data (safe_load's), refused early when nested deeper than
    MAX_YAML_DEPTH, larger than MAX_YAML_NODES once its aliases are expanded, or holding
    an alias to a node that contains it."""
    try:
        depth = 0
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_YAML_DEPTH:
                    raise ConfigError(f"{what} {path} nests deeper than {MAX_YAML_DEPTH} levels "
                                      f"(line {event.start_mark.line + 1}); an inventory needs a few")
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
        loader = yaml.SafeLoader(text)
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            _expanded_size(node, path, what, {}, set())
            return loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        raise ConfigError(f"{what} {path} is not YAML: {str(exc).splitlines()[0]}") from None


def _expanded_size(node: yaml.Node, path, what: str, sizes: dict[int, int], open_nodes: set[int]) -> int:
    if id(node) in sizes:
        return sizes[id(node)]
    if id(node) in open_nodes:
        raise ConfigError(f"{what} {path}: an alias at line {node.start_mark.line + 1} refers to a node that "
                          "contains it (a structure that holds itself); give the values it stands for")
    open_nodes.add(id(node))
    size = 1
    if isinstance(node, yaml.SequenceNode):
        children = node.value
    elif isinstance(node, yaml.MappingNode):
        children = [item for pair in node.value for item in pair]
    else:
        children = []
    for child in children:
        size += _expanded_size(child, path, what, sizes, open_nodes)
        if size > MAX_YAML_NODES:
            raise ConfigError(f"{what} {path}: its aliases expand to more than {MAX_YAML_NODES:,} values "
                              f"(line {node.start_mark.line + 1}); an inventory needs a few hundred")
    open_nodes.discard(id(node))
    sizes[id(node)] = size
    return size


# ---------------------------------------------------------------- typed values


def _kind(value: object) -> str:
    return {dict: "a table", list: "a list", str: "text", bool: "a boolean", int: "a number",
            float: "a number", type(None): "empty"}.get(type(value), type(value).__name__)


def wrong(path, key: str, expected: str, value: object) -> ConfigError:
    shown = repr(value)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    return ConfigError(f"{path}: {key} must be {expected}, not {_kind(value)} ({shown})")


def text(value: object, path, key: str) -> str:
    """A text value with no control characters (NUL, newline, ...): what reaches a
    command line or an environment."""
    if not isinstance(value, str):
        raise wrong(path, key, "text", value)
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise wrong(path, key, "text without control characters", value)
    return value


def table(value: object, path, key: str, empty_ok: bool = True) -> dict:
    if value is None and empty_ok:
        return {}
    if not isinstance(value, dict):
        raise wrong(path, key, "a table (NAME = VALUE pairs)", value)
    return value


def host_name(value: object, path, key: str) -> str:
    """A name ssh is given as its destination: never one it would read as an option."""
    name = text(value, path, key)
    if not name or name.startswith("-") or any(c.isspace() for c in name):
        raise wrong(path, key, "a host name (not empty, not starting with '-', no spaces)", value)
    return name

"""The on-disk cache of compiled kernels: drop what an edit made stale.

numba keys a cached function on its own source file only, but the machine code it caches
contains the kernels it calls from other files: after an edit to rne.py, cached code of
every module that imports rne (directly or through another module) still holds the old
RNE. `invalidate_stale_cache` runs when `engine` is imported, before any compiled code is
loaded: it drops the cache of exactly the modules whose source, or the source of an engine
module they import, changed since the cache was written. Set ROBODYN_KEEP_STALE_CACHE=1 to
skip it (the test of this guard does, to show what it prevents).
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
from pathlib import Path

from numba import config

ENGINE_DIR = Path(__file__).parent
PACKAGE = "robodyn.engine"  # the engine's import name

# every kernel's machine code depends on these: the flags, how Model and Data fields are read,
# and the lanes' vector type (a kernel of any module, spatial.qmul say, is compiled and cached
# for engine.vec's F64x8 arguments when a lane kernel calls it, without importing vec)
_EVERYONE_DEPENDS_ON = ("jit", "ptr", "fields", "vec")


# the first line of an import statement naming the engine: `from robodyn.engine... import`
# or `import robodyn.engine...`, at any indentation
_IMPORT_LINE = re.compile(rf"^[ \t]*(?:from|import)[ \t]+{re.escape(PACKAGE)}\b", re.MULTILINE)


def import_statements(source: str) -> list[str]:
    """The text of each statement in `source` that imports from the engine, found line by line
    (a parenthesized name list runs to its closing parenthesis, a backslash continues a line).
    Parsing only these is 30 times faster than parsing the whole file, which every process
    does at `import robodyn.engine`. A line inside a string that reads like such an import is
    taken too: the digests then depend on one module more, never on one less."""
    found = []
    for match in _IMPORT_LINE.finditer(source):
        start = match.start()
        end = source.find("\n", start)
        end = len(source) if end < 0 else end
        while source[start:end].rstrip().endswith("\\") and end < len(source):
            nxt = source.find("\n", end + 1)
            end = len(source) if nxt < 0 else nxt
        text = source[start:end]
        if "(" in text and ")" not in text:
            close = source.find(")", end)
            text = source[start : len(source) if close < 0 else close + 1]
        found.append(text.lstrip())
    return found


def _engine_imports(tree: ast.AST) -> set[str]:
    """The engine modules the import nodes of `tree` name, at any depth."""
    package = f"{PACKAGE}."
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == PACKAGE:
                found.update(alias.name for alias in node.names)
            elif node.module.startswith(package):
                found.add(node.module.removeprefix(package).split(".")[0])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(package):
                    found.add(alias.name.removeprefix(package).split(".")[0])
    return found


def module_imports(source: str, modules: set[str]) -> set[str]:
    """The engine modules a module's source imports (`from robodyn.engine.x import ...`,
    `from robodyn.engine import x`, `import robodyn.engine.x`), at any depth of the file:
    from the statements import_statements finds, or, where one of them does not parse (text
    in a string that only looks like an import, a comment the scan read as a parenthesis),
    from a parse of the whole file, so no import is ever missed."""
    try:
        trees = [ast.parse(statement) for statement in import_statements(source)]
    except SyntaxError:
        trees = [ast.parse(source)]
    found = set()
    for tree in trees:
        found |= _engine_imports(tree)
    return found & modules


def dependency_digests(src_dir: Path = ENGINE_DIR) -> dict[str, str]:
    """{module: digest of its source and of every engine module it imports, transitively}.

    numba keys a cached function on its own file only, but the code it caches contains the
    kernels it calls from other files: after an edit to rne.py, cached code of every module
    that imports rne (directly or through another module) still holds the old RNE. A
    module's digest changes exactly when its code, or code it can contain, changes.
    """
    sources = {p.stem: p.read_bytes() for p in sorted(src_dir.glob("*.py"))}
    modules = set(sources)
    imports = {name: module_imports(src.decode(), modules) for name, src in sources.items()}
    digests = {}
    for name in sources:
        seen, todo = set(), [name, *_EVERYONE_DEPENDS_ON]
        while todo:
            mod = todo.pop()
            if mod in seen or mod not in sources:
                continue
            seen.add(mod)
            todo.extend(imports[mod])
        h = hashlib.sha256()
        for mod in sorted(seen):
            h.update(mod.encode() + b"\0" + sources[mod] + b"\0")
        digests[name] = h.hexdigest()
    return digests


def cache_dir(src_dir: Path = ENGINE_DIR) -> Path:
    """Where numba keeps the cache of the engine's modules."""
    if config.CACHE_DIR:  # numba's UserProvidedCacheLocator
        from numba.core.caching import UserProvidedCacheLocator

        sub = UserProvidedCacheLocator.get_suitable_cache_subpath(str(src_dir / "jit.py"))
        return Path(config.CACHE_DIR) / sub
    return src_dir / "__pycache__"


def invalidate_stale_cache(src_dir: Path = ENGINE_DIR) -> list[str]:
    """Delete the cached code of every module whose digest changed since it was cached;
    returns those modules. Modules whose code and imports are unchanged keep their cache."""
    where = cache_dir(src_dir)
    stamp = where / "robodyn-dependencies.json"
    digests = dependency_digests(src_dir)
    try:
        old = json.loads(stamp.read_text()) if stamp.exists() else {}
    except (OSError, ValueError):
        old = {}
    stale = sorted(name for name, digest in digests.items() if old.get(name) != digest)
    if not stale:
        return []
    try:
        where.mkdir(parents=True, exist_ok=True)
        for name in stale:
            for f in list(where.glob(f"{name}.*.nbi")) + list(where.glob(f"{name}.*.nbc")):
                f.unlink(missing_ok=True)
        # written whole or not at all: another process may be reading it (pytest-xdist's workers)
        part = stamp.with_name(f"{stamp.name}.{os.getpid()}")
        part.write_text(json.dumps(digests, indent=0, sort_keys=True))
        os.replace(part, stamp)
    except OSError:
        pass  # a read-only install: numba falls back to its own cache locations
    return stale


def guard() -> list[str]:
    """invalidate_stale_cache() unless ROBODYN_KEEP_STALE_CACHE=1."""
    if os.environ.get("ROBODYN_KEEP_STALE_CACHE") == "1":
        return []
    return invalidate_stale_cache()

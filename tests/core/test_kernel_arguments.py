"""The kernels' arguments: at most ``MAX_ARGUMENTS`` positional ones per kernel, the rest in
the groups ``core.groups`` declares, and every unpacking of a group (in a kernel or in the
Python that calls it) names its items as the declaration does: callers and kernels agree by
name, not by position."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from xpbd_addon.core import groups, solver
from xpbd_addon.core.workspace import PairGrid

CORE = Path(solver.__file__).parent
MAX_ARGUMENTS = 16
KERNEL_DECORATORS = {"kernel", "parallel_kernel", "inline_kernel"}
DECLARED = {function.__name__: tuple(inspect.signature(function).parameters)
            for function in groups.DECLARED}


def _trees() -> list[tuple[Path, ast.Module]]:
    return [(path, ast.parse(path.read_text())) for path in sorted(CORE.rglob("*.py"))]


def _kernels(tree: ast.Module) -> list[ast.FunctionDef]:
    def name(decorator: ast.expr) -> str | None:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        return target.id if isinstance(target, ast.Name) else None

    return [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)
            and any(name(d) in KERNEL_DECORATORS for d in node.decorator_list)]


def _names(target: ast.expr) -> tuple[str, ...] | None:
    """The names a tuple target unpacks into (``*rest`` as "*": never a declaration's)."""
    if isinstance(target, ast.Tuple):
        return tuple(e.id if isinstance(e, ast.Name) else "*" for e in target.elts)
    return None


def test_no_kernel_takes_more_than_sixteen_positional_arguments():
    long = [f"{path.relative_to(CORE)}:{node.name} ({len(node.args.args)})"
            for path, tree in _trees() for node in _kernels(tree)
            if len(node.args.args) > MAX_ARGUMENTS]
    assert not long, f"kernels with more than {MAX_ARGUMENTS} arguments: {long}"


def test_kernels_find_their_groups():
    """The scan sees the kernels and the groups they take (the tests below test something)."""
    kernels = [node for _, tree in _trees() for node in _kernels(tree)]
    assert len(kernels) > 100
    taken = {a.arg for node in kernels for a in node.args.args} & set(DECLARED)
    assert taken == set(DECLARED)  # every declared group is taken by some kernel


def test_every_unpacking_of_a_group_uses_its_declared_names():
    """``a, b, c = group`` (or ``= self.group``) anywhere in the core: exactly the names the
    group's function declares, in its order."""
    wrong = []
    checked = 0
    for path, tree in _trees():
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
                continue
            value = node.value
            source = (value.id if isinstance(value, ast.Name) else
                      value.attr if isinstance(value, ast.Attribute) else None)
            names = _names(node.targets[0])
            if source not in DECLARED or names is None:
                continue
            checked += 1
            if names != DECLARED[source]:
                wrong.append(f"{path.relative_to(CORE)}:{node.lineno} {source}: {names}")
    assert not wrong, wrong
    assert checked >= 40


def test_kernels_unpack_their_groups_first():
    """A kernel taking a group either passes it on whole or unpacks it before its body."""
    late = []
    for path, tree in _trees():
        for kernel in _kernels(tree):
            taken = [a.arg for a in kernel.args.args if a.arg in DECLARED]
            body = [s for s in kernel.body if not (
                isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            head = set()
            for statement in body:
                if not (isinstance(statement, ast.Assign)
                        and isinstance(statement.value, ast.Name)
                        and statement.value.id in DECLARED):
                    break
                head.add(statement.value.id)
            for group in taken:
                used_as_items = any(isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name)
                                    and n.value.id == group for n in ast.walk(kernel))
                if used_as_items:
                    late.append(f"{path.relative_to(CORE)}:{kernel.name} indexes {group}")
                unpacked_later = any(
                    isinstance(n, ast.Assign) and isinstance(n.value, ast.Name)
                    and n.value.id == group for n in ast.walk(kernel)) and group not in head
                if unpacked_later:
                    late.append(f"{path.relative_to(CORE)}:{kernel.name} unpacks {group} late")
    assert not late, late


def test_each_group_is_its_parameters_in_order():
    for function in groups.DECLARED:
        names = DECLARED[function.__name__]
        assert function(*names) == names, function.__name__


def test_the_pair_grid_is_the_workspace_s():
    assert PairGrid._fields == DECLARED["pair_grid"]


def test_an_item_by_name():
    made = groups.selection("moved", "only", True, "extra")
    assert groups.item(groups.selection, made, "extra") == "extra"

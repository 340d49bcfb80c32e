"""Checks where a thinker is built: its palette, key tool, reachability and objective.

Why the plugin is needed: with ``palette: tuple[type[DecisionTool[Never, Artifact]], ...]`` mypy
accepts an abstract class inside the tuple, a class without ``@tool_name``, duplicate names, a
changed constructor and ``Any`` in a base, and it cannot know whether the key tool's input can
ever exist in a run. Both forms reach this module: a direct ``DecisionThinker[I, O](...)`` call
(a function hook on the class), ``super().__init__(...)`` in a subclass (a function hook on
``__init__ of DecisionThinker``) and an explicit ``DecisionThinker.__init__(self, ...)`` (a
method hook on its full name). Palettes held in constants of other modules work because the
hook reads the argument *types* (a tuple keeps each entry's class), not the call's syntax.

Each palette, key tool and branch of a conditional argument is checked by ``_check_branch``
against the shared rules (names, constructors, bound types, reachability, dead tools, the
objective); what an argument's expression proves is read in :mod:`mypy_plugin._arguments`, the
branches are enumerated and the verdicts filed once in :mod:`mypy_plugin._branches`, and the
name a ``tool_name("x")(Cls)`` call gives is decided in :mod:`mypy_plugin._call_forms`. An
entry whose type is not one specific class (``type[SplitNote]``, ``Any``) is reported as
``harness-undecidable`` and the rules that need every entry (reachability, dead tools) are
skipped: they are never judged on a guess.

What plain mypy already reports is not reported again: a non-tool class (``[arg-type]``), an
abstract class passed directly as ``key_tool`` (``[type-abstract]``). A key tool whose output is
not ``ListArtifact[O]`` is reported in the runtime's words even where mypy's ``[arg-type]``
precedes it (see :func:`_already_reported`).

One concern, past 400 lines: the palette checks at a thinker's construction site, each form of
the call (direct, ``super().__init__``, an explicit ``__init__``) reaching the one check of its
branches.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from mypy import errorcodes as codes
from mypy.checker import TypeChecker
from mypy.maptype import map_instance_to_supertype
from mypy.messages import format_type
from mypy.nodes import (
    ClassDef,
    Context,
    Expression,
    ListExpr,
    MemberExpr,
    NameExpr,
    SetExpr,
    TypeInfo,
)
from mypy.options import Options
from mypy.plugin import FunctionContext
from mypy.types import (
    AnyType,
    Instance,
    Type,
    TypeVarType,
    UnionType,
    get_proper_type,
)
from mypy.typevars import fill_typevars

from harness.palette._rules import (
    ToolFacts,
    Verdict,
    container_entry_verdict,
    generic_input_verdict,
    palette_shape_verdict,
    palette_verdicts,
    too_many_branches_verdict,
    undecidable_name_verdict,
    unknown_entry_verdict,
)
from harness.palette._types import ToolSides
from mypy_plugin._arguments import (
    CallContext,
    Site,
    class_of,
    instance_of_class_type,
    literal_text,
    not_a_class,
    palette_entries,
    shown_later,
    spelled_out_palette,
    unprovable,
)
from mypy_plugin._branches import MAX_COMBINATIONS, Branch, Filed, branches, file_all
from mypy_plugin._call_forms import call_form_name
from mypy_plugin._dependencies import class_triggers, depend_on, wants_dependencies
from mypy_plugin._facts import (
    MypyType,
    artifact_side,
    facts_of,
    own_name_record,
    own_verdicts,
    tool_base,
)
from mypy_plugin._names import DECISION_TOOL, THINKER
from mypy_plugin._plain import plain_palette_fine
from mypy_plugin._report import checker_fail, report, report_surprise

__all__ = ["check_direct_thinker", "check_explicit_init", "check_super_init"]


def _check(site: Site) -> None:
    ctx = site.ctx
    api = ctx.api
    plain = plain_palette_fine(site)
    if plain is not None:  # most palettes: nothing to report
        if wants_dependencies(api):  # what the general check would depend on
            depend_on(api, _names_involved([tool.info for tool in plain], plain, site))
        return
    options = api.options
    key_type, key_expr = site.argument("key_tool")
    palette_type, palette_expr = site.argument("palette")
    if key_type is None or key_expr is None or palette_type is None or palette_expr is None:
        return
    palette_type = spelled_out_palette(api, palette_type, palette_expr)
    keys = branches(api, key_type, key_expr, options)
    palettes = branches(api, palette_type, palette_expr, options)
    if len(keys) * len(palettes) > MAX_COMBINATIONS:
        report(api.msg, too_many_branches_verdict(MAX_COMBINATIONS), palette_expr)
        return
    runs: dict[tuple[int, int], list[Filed]] = {}
    for key_index, key in enumerate(keys):
        for palette_index, palette in enumerate(palettes):
            runs[key_index, palette_index] = _check_branch(site, key, palette)
    file_all(site, runs, keys, palettes, palette_expr)


def _check_branch(site: Site, key: Branch, palette: Branch) -> list[Filed]:
    """What the palette check files for one key tool and one palette (branches of conditional
    arguments, or the arguments themselves)."""
    ctx = site.ctx
    api = ctx.api
    options = api.options
    key_type, key_expr = key.typ, key.node
    palette_type, palette_expr = palette.typ, palette.node
    output_type, _ = site.argument("output_type")
    objective_type, objective_expr = site.argument("objective")
    filed: list[Filed] = []
    key_info = class_of(key_type)
    key_unknown = not_a_class(key_expr, key_type, options) or unprovable(
        "Key tool", key_expr, shown_later(key_type, options), api
    )
    if key_unknown is None and key_info is not None and key_info.fullname == DECISION_TOOL:
        key_unknown = container_entry_verdict(
            "Key tool", format_type(key_type, options), "a container or a join"
        )
    if key_unknown is not None:
        filed.append(("error", key_unknown, key_expr, None, None))
        return filed
    palette_unknown = unprovable("Palette", palette_expr, shown_later(palette_type, options), api)
    if palette_unknown is not None:
        filed.append(("error", palette_unknown, palette_expr, None, None))
        return filed
    if key_info is None:
        if instance_of_class_type(key_type) is not None or isinstance(
            get_proper_type(key_type), (UnionType, AnyType)
        ):
            shown = format_type(key_type, options)
            filed.append(("error", unknown_entry_verdict("Key tool", shown), key_expr, None, None))
        return filed  # anything else: plain mypy reports it
    entries = palette_entries(site, palette_type, palette_expr)
    if entries is None:
        proper = get_proper_type(palette_type)
        if isinstance(proper, Instance) and proper.type.fullname != "builtins.tuple":
            _note_palette_shape(site, proper, palette_expr)  # after mypy's own [arg-type]
        if isinstance(proper, Instance) and proper.type.fullname == "builtins.tuple":
            shown = format_type(palette_type, options)
            verdict = unknown_entry_verdict("Palette entry", shown)
            filed.append(("error", verdict, palette_expr, None, None))
        elif isinstance(proper, AnyType):  # mypy accepts Any anywhere: say it proves nothing
            verdict = unknown_entry_verdict("Palette", format_type(palette_type, options))
            filed.append(("error", verdict, palette_expr, None, None))
        return filed  # anything else: plain mypy reports it
    for entry in entries:
        if entry.unknown is not None:
            filed.append(("error", entry.unknown, entry.node, None, None))
        elif entry.info is None:
            verdict = unknown_entry_verdict("Palette entry", entry.shown)
            filed.append(("error", verdict, entry.node, None, None))
    known = [(entry, entry.info) for entry in entries if entry.info is not None]
    # every entry a tool class or certainly none (the runtime leaves those out of the graph)
    complete = all(
        entry.info is not None
        or (entry.unknown is not None and entry.unknown.code != "harness-undecidable")
        for entry in entries
    )

    facts: dict[str, ToolFacts[MypyType]] = {}
    nodes: dict[str, Context] = {}
    infos: dict[str, TypeInfo] = {}
    undecided: dict[str, Verdict] = {}  # tools calls may name, with no name promised
    for entry, entry_info in known:
        if entry_info.fullname not in facts:
            facts[entry_info.fullname] = _named_facts(
                api, entry_info, entry.written, options, undecided
            )
        nodes.setdefault(entry_info.fullname, entry.node)
        infos.setdefault(entry_info.fullname, entry_info)
    key_facts = facts.get(key_info.fullname) or _named_facts(
        api, key_info, key_expr, options, undecided
    )
    nodes.setdefault(key_info.fullname, key_expr)
    infos[key_info.fullname] = key_info
    palette_facts = [facts[entry_info.fullname] for _, entry_info in known]

    thinker_input = None
    bound: list[MypyType] = []
    members: list[MypyType] = []
    if site.thinker_args is not None and len(site.thinker_args) == 2:
        declared = get_proper_type(site.thinker_args[0])
        side = artifact_side(declared, options)
        thinker_input = side if isinstance(side, MypyType) else None
        if isinstance(declared, UnionType):
            sides = [artifact_side(item, options) for item in declared.relevant_items()]
            members = [m for m in sides if isinstance(m, MypyType)]
            members = members if len(members) == len(sides) else []
        elif isinstance(declared, TypeVarType) and complete:
            verdict = generic_input_verdict(declared.name)
            filed.append(("error", verdict, ctx.context, None, None))
            bound = _inputs_bound_here(site, options)
    asked = instance_of_class_type(output_type) if output_type is not None else None
    asked_side = artifact_side(asked, options) if asked is not None else None
    output_node = asked_side if isinstance(asked_side, MypyType) else None

    verdicts = palette_verdicts(
        thinker_input=thinker_input,
        output_type=output_node,
        key_tool=key_facts,
        palette=palette_facts,
        objective=literal_text(objective_type, objective_expr),
        complete=complete,
        input_members=members,
        own_verdicts=own_verdicts,
    )
    for verdict in verdicts:
        info = infos.get(verdict.key)
        node = nodes.get(verdict.key, key_expr)
        if info is not None and _already_reported(verdict, info, key_info):
            continue
        record = own_name_record(info) if info is not None else None
        dynamic = info is not None and record is not None and bool(record.get("dynamic"))
        if verdict.code == "harness-name" and verdict.key in undecided:
            verdict = undecided[verdict.key]
            filed.append(("error", verdict, node, None, None))
            continue
        if dynamic and info is not None and record is not None and verdict.code == "harness-name":
            pointer = undecidable_name_verdict(info.name, info.fullname)  # said where defined
            filed.append(("pointer", pointer, node, info, record))
            continue
        if verdict.definition and info is not None and record is not None:
            filed.append(("pointer", verdict, node, info, record))
            continue
        if verdict.code in ("harness-key-tool", "harness-graph"):
            node = key_expr
        elif verdict.code == "harness-objective" and objective_expr is not None:
            node = objective_expr
        filed.append(("error", verdict, node, None, None))

    seen: set[tuple[str, str]] = set()
    for start in bound:  # the subclasses of this module that bind the input and build here
        for verdict in palette_verdicts(
            thinker_input=start,
            output_type=output_node,
            key_tool=key_facts,
            palette=palette_facts,
            own_verdicts=own_verdicts,
        ):
            if verdict.code not in ("harness-graph", "harness-dead-tool"):
                continue
            if (verdict.code, verdict.message) in seen:
                continue
            seen.add((verdict.code, verdict.message))
            node = key_expr if verdict.code == "harness-graph" else nodes.get(verdict.key, key_expr)
            filed.append(("error", verdict, node, None, None))

    if wants_dependencies(api):
        depend_on(api, _names_involved(infos.values(), [*palette_facts, key_facts], site))
    return filed


def _inputs_bound_here(site: Site, options: Options) -> list[MypyType]:
    """The inputs the thinker classes of the module being checked bind, where they are built by
    this generic class's constructor (``class Triage(Base[Note]): pass``): their palette is
    this one, with the input known. Subclasses in other modules are not seen from here."""
    api = site.ctx.api
    owner = site.owner
    if owner is None or not isinstance(api, TypeChecker):
        return []
    constructor = owner.get_method("__init__")
    thinker = next((b for b in owner.mro if b.fullname == THINKER), None)
    if constructor is None or thinker is None:
        return []
    found: list[MypyType] = []
    for statement in api.tree.defs:
        info = statement.info if isinstance(statement, ClassDef) else None
        if info is None or info is owner or owner not in info.mro:
            continue
        if info.get_method("__init__") is not constructor:
            continue  # a constructor of its own: its palette is checked there
        own = fill_typevars(info)
        if not isinstance(own, Instance):
            continue
        args = map_instance_to_supertype(own, thinker).args
        side = artifact_side(args[0], options) if args else None
        if isinstance(side, MypyType) and side not in found:
            found.append(side)
    return found


def _named_facts(
    api: object,
    info: TypeInfo,
    written: Expression | None,
    options: Options,
    undecided: dict[str, Verdict],
) -> ToolFacts[MypyType]:
    """A tool's facts, with the name a ``tool_name("x")(Cls)`` call gives a class that has no
    ``@tool_name`` of its own (:mod:`mypy_plugin._call_forms`); where calls may name it but the
    program does not promise which name, the ``harness-undecidable`` verdict to file instead of
    "no @tool_name" goes into ``undecided``."""
    facts = facts_of(info, options)
    if facts.name is not None or facts.not_a_tool is not None or own_name_record(info):
        return facts
    named = call_form_name(api, info, written)
    if isinstance(named, str):
        return dataclasses.replace(facts, name=named, inherited_from=None, unseen_decorator=None)
    if named is not None:
        undecided[facts.key] = named
    return facts


def _already_reported(verdict: Verdict, info: TypeInfo, key_info: TypeInfo) -> bool:
    """What plain mypy reports itself: a non-tool class (``[arg-type]``), an abstract key tool
    passed directly (``[type-abstract]``).

    A key tool's output is ours: the signature hook (``relax_key_tool``) lets mypy accept any
    tool there, so the mismatch reads as ``[harness-key-tool]``, not as an ``[arg-type]`` about
    ``type[DecisionTool[Never, ListArtifact[Verdict]]]``.
    """
    if verdict.code == "harness-tool" and info is key_info:
        return True  # [arg-type] or [type-abstract] on the key_tool argument
    return verdict.code == "harness-tool" and tool_base(info) is None  # [arg-type]


def _names_involved(
    infos: Iterable[TypeInfo], facts: Sequence[ToolSides[MypyType]], site: Site
) -> list[str]:
    """Every class (and tool member) the verdicts read: each tool's MRO with its constructor
    and name, each artifact type's MRO down through list iterands, the thinker's arguments."""
    names = class_triggers(base for info in infos for base in info.mro)
    nodes: list[MypyType] = []
    for fact in facts:
        nodes += [n for n in (fact.input_node, fact.output_node) if n is not None]
    walked: set[Instance] = set()  # tools of one palette share most artifact types
    for node in nodes:
        current: MypyType | None = node
        while current is not None and current.typ not in walked:
            walked.add(current.typ)
            names += [base.fullname for base in current.typ.type.mro]
            current = current.iterand()
    if site.thinker_args:
        for arg in site.thinker_args:
            proper = get_proper_type(arg)
            if isinstance(proper, Instance):
                names += [base.fullname for base in proper.type.mro]
    return sorted(set(names))


def _note_palette_shape(site: Site, proper: Instance, expr: Expression) -> None:
    """A palette that is not a tuple (mypy's own ``[arg-type]`` says so, without a fix): the
    runtime's words and the fix as a note on the same line."""
    names = (
        [item.name for item in expr.items if isinstance(item, NameExpr | MemberExpr)]
        if isinstance(expr, ListExpr | SetExpr)
        else []
    )
    verdict = palette_shape_verdict(proper.type.name, names)
    site.ctx.api.msg.note(
        f"{verdict.message}: {verdict.fix[0].lower()}{verdict.fix[1:]}",
        expr,
        code=codes.ARG_TYPE,  # it explains mypy's own error: one ignore covers both
    )


def _surprise(ctx: CallContext, error: Exception) -> None:
    report_surprise(checker_fail(ctx.api.msg), ctx.context, "a thinker's palette", error)


def check_direct_thinker(ctx: FunctionContext) -> Type:
    """``DecisionThinker[I, O](parent, ...)``: the thinker's ``I`` and ``O`` come from the call."""
    try:
        returned = get_proper_type(ctx.default_return_type)
        args = returned.args if isinstance(returned, Instance) else None
        _check(Site(ctx, args))
    except Exception as error:  # any bug of ours must not crash the user's type check
        _surprise(ctx, error)
    return ctx.default_return_type


def _check_in_thinker_class(ctx: CallContext) -> None:
    """A constructor call inside a thinker subclass: ``I`` and ``O`` come from its bases."""
    api = ctx.api
    if not isinstance(api, TypeChecker) or not api.scope.current_function():
        return
    info = api.scope.enclosing_class()
    thinker = next((b for b in info.mro if b.fullname == THINKER), None) if info else None
    if info is None or thinker is None:
        return
    own = fill_typevars(info)
    args = map_instance_to_supertype(own, thinker).args if isinstance(own, Instance) else None
    _check(Site(ctx, args, info))


def check_super_init(ctx: CallContext) -> Type:
    """``super().__init__(...)`` in a thinker subclass, or ``DecisionThinker.__init__(self,
    parent, ...)`` (a method call, the same check): ``I`` and ``O`` come from its bases."""
    try:
        _check_in_thinker_class(ctx)
    except Exception as error:  # any bug of ours must not crash the user's type check
        _surprise(ctx, error)
    return ctx.default_return_type


check_explicit_init = check_super_init

"""``run_sync(Triage, "text")``: which input a thinker takes, beside mypy's own error."""

from __future__ import annotations

from mypy import errorcodes as codes
from mypy.maptype import map_instance_to_supertype
from mypy.messages import format_type, format_type_bare
from mypy.plugin import FunctionContext
from mypy.subtypes import is_subtype
from mypy.types import (
    Instance,
    Type,
    get_proper_type,
)
from mypy.typevars import fill_typevars

from mypy_plugin._arguments import class_of
from mypy_plugin._names import THINKER
from mypy_plugin._report import checker_fail, reporting_surprises

__all__ = ["note_thinker_input"]


def note_thinker_input(ctx: FunctionContext) -> Type:
    """``run_sync(Triage, "text")``: mypy's ``[arg-type]`` names a type variable; add which
    input the thinker takes and how to pass one, as a note on the same line."""
    with reporting_surprises(checker_fail(ctx.api.msg), ctx.context, "a thinker's input"):
        if len(ctx.arg_types) >= 2 and ctx.arg_types[0] and ctx.arg_types[1]:
            info = class_of(ctx.arg_types[0][0])
            thinker = next((b for b in info.mro if b.fullname == THINKER), None) if info else None
            own = fill_typevars(info) if info is not None else None
            if info is not None and thinker is not None and isinstance(own, Instance):
                wanted = map_instance_to_supertype(own, thinker).args[0]
                given = ctx.arg_types[1][0]
                if isinstance(get_proper_type(wanted), Instance) and not is_subtype(given, wanted):
                    shown = format_type(wanted, ctx.api.options)
                    ctx.api.msg.note(
                        f'"{info.name}" takes {shown} as its input, not '
                        f"{format_type(given, ctx.api.options)}: pass one, e.g. "
                        f"run_sync({info.name}, {format_type_bare(wanted, ctx.api.options)}(...))",
                        ctx.args[1][0],
                        code=codes.ARG_TYPE,  # it explains mypy's own error: one ignore covers both
                    )
    return ctx.default_return_type

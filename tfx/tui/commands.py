"""The ctrl+p command palettes: ``ListProvider`` (both apps' palettes are lists of
(name, help, callback)) and the kernel explorer's: go to scope, set knob, set parameter,
switch profile, pin, export. Imported when the palette first opens (textual.command is
not needed for the first frame)."""

from __future__ import annotations

from functools import partial
from typing import Callable

from textual.command import DiscoveryHit, Hit, Hits, Provider


class ListProvider(Provider):
    """A command palette over ``commands()``: (name, help, callback) triples; names that
    start with one of ``DISCOVER`` are offered before anything is typed."""

    DISCOVER: tuple[str, ...] = ()

    def commands(self) -> list[tuple[str, str, Callable]]:
        raise NotImplementedError

    async def discover(self) -> Hits:
        for name, help_text, cb in self.commands():
            if name.startswith(self.DISCOVER):
                yield DiscoveryHit(name, cb, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, cb in self.commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), cb, text=name, help=help_text)


class TfxCommands(ListProvider):
    DISCOVER = ("export", "reload", "hardware", "switch", "pin", "code generator")

    def commands(self):
        app = self.app
        out = []
        for name, help_text, cb in (
            ("export: screen as SVG", "save the screen (ctrl+s)", app.action_export_svg),
            ("export: analysis as JSON", "analysis.to_json() (ctrl+j)", app.action_export_json),
            ("export: timeline as Chrome trace", "the simulator's events (ctrl+t)",
             app.action_export_trace),
            ("reload kernel from disk", "r", app.action_reload),
            ("check: run the kernel small on random data", "c (tfx run's quick check)",
             app.action_run_check),
            ("hardware: reset all knobs", "Z on the Hardware pane", app.reset_all_knobs),
            ("hardware: save profile as...", "w on the Hardware pane", app.action_save_profile),
        ):
            out.append((name, help_text, cb))
        a = app.analysis
        if a is not None:
            from tfx.present.analysis_report import scope_rows
            for _, node in scope_rows(a):
                out.append((f"go to scope: {node.label} (line {node.line})", node.id,
                            partial(app.goto_scope, node.id)))
            for p in a.kernel.params:
                out.append((f"set parameter: {p.name}", f"now {a.params.get(p.name)}",
                            partial(app.prompt_param, p.name)))
        for path in app.knob_paths():
            out.append((f"set knob: {path}", "type a value, x2 or /2", partial(app.prompt_knob, path)))
        from tfx.analysis.codegen import CODEGENS
        for cg in CODEGENS.values():
            out.append((f"code generator: {cg.name}", f"g cycles; {cg.description}",
                        partial(app.set_codegen, cg.name)))
        from tfx.hw.profile import list_profiles
        for name in list_profiles():
            out.append((f"switch profile: {name}", "rerun on this hardware",
                        partial(app.switch_profile, name)))
        return out

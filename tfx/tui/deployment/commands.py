"""The ctrl+p command palette of the model screen: model, profile, suggest, sweep, save, export."""

from __future__ import annotations

from functools import partial

from tfx.tui.commands import ListProvider


class ModelCommands(ListProvider):
    DISCOVER = ("suggest", "hardware sweep", "save", "undo", "export")

    def commands(self):
        app = self.app
        out = [
            ("suggest: attention", "search TP/CP for the attention (a on tab 2)", partial(app.run_suggest, "attn")),
            ("suggest: FFN", "search TP/EP for the FFN (f on tab 2)", partial(app.run_suggest, "ffn")),
            ("suggest: both", "search every knob (b on tab 2)", partial(app.run_suggest, "both")),
            ("hardware sweep", "rank hardware knobs (r on tab 6)", app.run_sweep),
            ("save configuration as...", "s", app.action_save),
            ("undo the last knob edit", "u", app.action_undo),
            ("export: screen as SVG", "ctrl+s", app.action_export_svg),
            ("export: latency result as JSON", "ctrl+j; tfx model compare reads it", app.action_export_json),
        ]
        from tfx.hw.profile import list_profiles
        from tfx.model.presets import list_models
        for name in list_models():
            out.append((f"model: {name}", "rerun with this preset", partial(app.set_knob, "model", name)))
        for name in list_profiles():
            out.append((f"hardware profile: {name}", "rerun on this profile", partial(app.set_knob, "hw", name)))
        return out

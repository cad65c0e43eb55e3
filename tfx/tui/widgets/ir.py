"""Pane 1, IR: canonical kernel text beside the scope tree and the selected scope's records."""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, ScrollableContainer, Vertical, VerticalScroll
from textual.widgets import Static, Tree

from tfx.present.formatting import counted, metric as fmt_metric
from tfx.tui.widgets import layout_if_resized


def _label(node) -> str:
    extra = ""
    if node.kind == "mesh":
        extra = f" x{node.positions}"
    elif node.kind == "loop":
        extra = f" x{node.trips}" + (f" stages {node.stages}" if node.stages not in (None, 1) else "")
    caps = getattr(node.region, "captures", None) if node.region is not None else None
    if caps:
        names = ", ".join(c.name + (f"->{c.move_to}" if c.move_to else "") for c in caps)
        extra += f" capture({names})"
    return f"{node.label}{extra}"


class ScopeTree(Tree):
    BINDINGS = [Binding("enter", "select_cursor", "Select", id="ir.select", show=False)]


class IRPane(Horizontal):
    DEFAULT_CSS = """
    IRPane { height: 1fr; scrollbar-size: 1 1; }
    IRPane ScrollableContainer, IRPane ScopeTree, IRPane VerticalScroll { scrollbar-size: 1 1; }
    IRPane #ir-text-scroll { width: 1fr; border-right: tall $panel; overflow: auto auto; }
    IRPane #ir-text { width: auto; }
    IRPane #ir-side { width: 1fr; max-width: 64; }
    IRPane ScopeTree { height: 1fr; min-height: 5; }
    IRPane #ir-records-scroll { height: 1fr; border-top: tall $panel; }
    """

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.selected_id: str | None = None
        self._scopes: dict[str, object] = {}
        self._tree_shape: tuple | None = None     # (scope id, has children) in walk order
        self._tree_labels: tuple = ()              # the tree's labels, in the same order
        self._tree_nodes: dict = {}                # scope id -> its TreeNode
        self._text_shown: tuple | None = None      # (text, marked line) the IR text shows
        self._text_size: tuple | None = None       # its (lines, widest line's cells)

    def compose(self) -> ComposeResult:
        with ScrollableContainer(id="ir-text-scroll"):
            yield Static(id="ir-text")
        with Vertical(id="ir-side"):
            yield ScopeTree("scopes", id="ir-tree")
            with VerticalScroll(id="ir-records-scroll"):
                yield Static(id="ir-records")

    def show(self, analysis, text: str, domain: str) -> None:
        self._analysis, self._domain = analysis, domain
        tree = self.query_one(ScopeTree)
        nodes = list(analysis.root.walk())
        shape = tuple((n.id, bool(n.children)) for n in nodes)
        labels = tuple(_label(n) for n in nodes)
        if shape != self._tree_shape:
            self._tree_shape, self._tree_labels = shape, labels
            self._scopes = {}
            tree.clear()
            tree.root.set_label(_label(analysis.root))
            tree.root.data = analysis.root.id
            self._tree_nodes = {analysis.root.id: tree.root}

            def add(parent, node):
                for c in node.children:
                    if c.children:
                        child = self._tree_nodes[c.id] = parent.add(_label(c), data=c.id, expand=True)
                        add(child, c)
                    else:
                        self._tree_nodes[c.id] = parent.add_leaf(_label(c), data=c.id)

            add(tree.root, analysis.root)
            tree.root.expand()
        elif labels != self._tree_labels:
            # the same scopes with other trip counts (an edit of a tile size): relabel them in
            # place, cursor and folds kept, instead of building the tree again
            for (nid, _), label, old in zip(shape, labels, self._tree_labels):
                if label != old:
                    self._tree_nodes[nid].set_label(label)
            self._tree_labels = labels
        self._scopes = {n.id: n for n in analysis.root.walk()}
        if self.selected_id not in self._scopes:
            self.selected_id = analysis.root.id
        self._text = text
        self._render_all()

    def _render_all(self) -> None:
        node = self._scopes.get(self.selected_id)
        line = getattr(node, "line", None)
        # the kernel's text with the selected scope's line marked: a keystroke (an edit of a
        # parameter's value, which the canonical text does not show) leaves it as it was, and
        # the Static is not touched. Else its size (no_wrap, width auto: lines and widest line)
        # decides the layout: the same size repaints it in place. A layout of the whole screen
        # was most of the app's side of a keystroke (bench/keystroke_speed.py)
        if (self._text, line) != self._text_shown:
            out = Text(no_wrap=True)
            for i, src in enumerate(self._text.splitlines(), 1):
                style = "reverse" if i == line else ""
                out.append(f"{i:3} ", style="dim")
                out.append(src + "\n", style=style)
            lines = out.plain.splitlines()
            size = (len(lines), max(map(cell_len, lines), default=0))
            self.query_one("#ir-text", Static).update(out, layout=size != self._text_size)
            self._text_shown, self._text_size = (self._text, line), size
        # the records fold at the side's width: laid out again only where their height moves
        records = self.query_one("#ir-records", Static)
        records.update(self._records(node), layout=False)
        layout_if_resized(records)

    def _records(self, node) -> Text:
        a, dom = self._analysis, self._domain
        t = Text()
        if node is None:
            return t
        t.append(f"{node.label}", style="bold")
        # the count as the annotated IR writes it ('x65,536'), singular at one
        t.append(f"  [{dom}]  {node.kind}, line {node.line}, {counted(node.execs, 'execution')}, "
                 f"{node.precision}\n")
        rec = a.scope_records(node, dom)
        if not rec:
            t.append("no work or traffic in this scope\n", style="dim")
        for k in sorted(rec):
            short = k.replace("memory.traffic.", "").replace("compute-cost.", "")
            t.append(f"{short:<18} ", style="cyan")
            t.append(fmt_metric(k, rec[k]) + "\n")
        return t

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted) -> None:
        if event.node.data is not None and event.node.data != self.selected_id:
            self.selected_id = event.node.data
            self._render_all()

    def goto(self, scope_id: str) -> None:
        tree = self.query_one(ScopeTree)

        def find(n):
            if n.data == scope_id:
                return n
            for c in n.children:
                r = find(c)
                if r is not None:
                    return r
            return None

        found = find(tree.root)
        if found is not None:
            tree.move_cursor(found)
            tree.focus()
        self.selected_id = scope_id
        self._render_all()

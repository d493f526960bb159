"""The report's plots: matplotlib Figure objects with the Agg canvas (no pyplot, no global state),
returned as base64 PNG. Untrusted labels are shown as plain text (no mathtext)."""

from __future__ import annotations

import base64
import io
import math
import re
import warnings

from .data import EPS, CellStat, ClauseStat, ReportData

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _plain(text: str, limit: int = 80) -> str:
    """Untrusted text for a matplotlib label: no mathtext, no control characters, bounded length."""
    text = _CONTROL.sub(" ", text)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    # every "$" escaped: matplotlib then never parses mathtext and shows the text as it was
    return text.replace("$", r"\$")


def _figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _png(fig) -> str:
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. a glyph missing from the font in an untrusted label
        fig.savefig(buf, format="png", metadata={"Software": None})
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _bins(maximum: float) -> list[float]:
    width = max(1.0, math.ceil(maximum / 20)) if maximum > 0 else 1.0
    edges = [0.0]
    while edges[-1] < maximum - EPS or len(edges) < 2:
        edges.append(edges[-1] + width)
    return edges


def _short(notebook: str) -> str:
    return notebook.split("_", 1)[0] if re.match(r"^\d+_", notebook) else notebook


def plot_total_histogram(data: ReportData) -> str:
    fig = _figure(7.5, 3.2)
    ax = fig.add_subplot()
    totals = data.totals
    ax.hist(totals, bins=_bins(data.max_total), color="#4c72b0", edgecolor="white")
    if totals:
        ax.axvline(data.mean_total, color="#c44e52", linestyle="--", label=f"mean {data.mean_total:.2f}")
        ax.axvline(
            data.median_total,
            color="#55a868",
            linestyle=":",
            linewidth=2,
            label=f"median {data.median_total:.2f}",
        )
        ax.legend(loc="upper right", frameon=False)
    ax.set_xlim(0, max(data.max_total, 1))
    ax.set_xlabel(f"Total score (max {data.max_total:g})")
    ax.set_ylabel("Students")
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.set_title(f"Total scores ({len(totals)} students)")
    return _png(fig)


def plot_notebook_histograms(data: ReportData) -> str:
    k = max(1, len(data.notebooks))
    fig = _figure(max(7.5, 2.4 * k), 2.6)
    axes = fig.subplots(1, k, squeeze=False, sharey=True)[0]
    for ax, name in zip(axes, data.notebooks, strict=False):
        scores = [s.scores[name] for s in data.students if name not in s.missing]
        ax.hist(scores, bins=_bins(data.notebook_max[name]), color="#8172b2", edgecolor="white")
        if not scores:
            ax.text(
                0.5,
                0.5,
                "no submissions",
                transform=ax.transAxes,
                ha="center",
                va="center",
                color="#777777",
                fontsize=9,
            )
        ax.set_xlim(0, max(data.notebook_max[name], 1))
        ax.set_title(f"{_plain(name, 30)} (n={len(scores)})", fontsize=9)
        ax.set_xlabel(f"score (max {data.notebook_max[name]:g})", fontsize=8)
        ax.tick_params(labelsize=8)
        ax.yaxis.get_major_locator().set_params(integer=True)
    axes[0].set_ylabel("Students", fontsize=8)
    return _png(fig)


def sorted_cells(data: ReportData) -> list[CellStat]:
    order = {nb: i for i, nb in enumerate(data.notebooks)}
    present = [c for c in data.cells if c.n]
    return sorted(
        present, key=lambda c: (c.pass_rate, c.mean_fraction or 0.0, order.get(c.notebook, 0), c.grade_id)
    )


def plot_cell_pass_rates(data: ReportData) -> str:
    cells = sorted_cells(data)
    fig = _figure(max(7.5, 0.55 * len(cells) + 1.5), 4.2)
    ax = fig.add_subplot()
    x = range(len(cells))
    rates = [100 * (c.pass_rate or 0.0) for c in cells]
    ax.bar(x, rates, color=[_rate_color(c.pass_rate) for c in cells], label="full marks")
    ax.plot(
        x,
        [100 * (c.mean_fraction or 0.0) for c in cells],
        "o",
        color="#333333",
        markersize=5,
        label="mean % of points",
    )
    ax.set_xticks(
        list(x),
        [_plain(f"{_short(c.notebook)} · {c.grade_id}", 40) for c in cells],
        rotation=45,
        ha="right",
        fontsize=8,
    )
    ax.set_ylim(0, 105)
    ax.set_ylabel("% of students")
    ax.set_title("Test cells: students with full marks (worst first)")
    ax.legend(loc="upper left", frameon=False, fontsize=8)
    return _png(fig)


def _rate_color(rate: float | None):
    from matplotlib import colormaps

    return colormaps["RdYlGn"](0.1 + 0.8 * (rate or 0.0))


def clauses_by_cell(data: ReportData) -> list[tuple[CellStat, list[ClauseStat]]]:
    """Each test cell with the clauses its records carry: cells in the order of :func:`sorted_cells`
    (fewest full marks first), each cell's clauses most often lost first (then K1, K2, …)."""
    groups: dict[tuple[str, str], list[ClauseStat]] = {}
    for c in data.clauses:
        groups.setdefault((c.notebook, c.grade_id), []).append(c)
    out = []
    for cell in sorted_cells(data):
        members = groups.get((cell.notebook, cell.grade_id))
        if members:
            out.append((cell, sorted(members, key=lambda c: (-(c.lost_share or 0.0), c.sort_key))))
    return out


def plot_clause_losses(data: ReportData) -> str:
    groups = clauses_by_cell(data)
    rows = sum(len(m) for _, m in groups) + len(groups)
    fig = _figure(9.5, 0.9 + 0.26 * rows)
    ax = fig.add_subplot()
    y = 0
    ticks, labels, heads = [], [], []
    for cell, members in groups:
        heads.append((y, f"{cell.grade_id} ({cell.notebook}): {cell.full}/{cell.n} with full marks"))
        y += 1
        for c in members:
            share = c.lost_share or 0.0
            ax.barh(y, 100 * share, color=_rate_color(1.0 - share), height=0.75)
            ax.text(
                100 * share + 1, y, f"{100 * share:.0f}% ({c.lost}/{c.submitted})", va="center", fontsize=7
            )
            ticks.append(y)
            labels.append(_plain(f"{c.clause} ({c.max_points:g} pt) {c.text}", 60))
            y += 1
    for pos, text in heads:
        ax.text(0, pos, _plain(text, 90), va="center", ha="left", fontsize=8, fontweight="bold")
        if pos:
            ax.axhline(pos - 0.5, color="#bbbbbb", linewidth=0.6)
    ax.set_yticks(ticks, labels, fontsize=7)
    ax.set_ylim(y - 0.5, -0.7)
    ax.set_xlim(0, 118)
    ax.set_xticks([0, 25, 50, 75, 100])
    ax.set_xlabel("% of the students who submitted the notebook that lost the clause")
    ax.set_title(
        "Clauses by test cell: students who lost each (worst cell first, worst clause first)", fontsize=10
    )
    return _png(fig)

"""The report's plots: matplotlib Figure objects with the Agg canvas (no pyplot, no global state),
returned as base64 PNG. Untrusted labels are shown as plain text (no mathtext)."""

from __future__ import annotations

import base64
import io
import math
import re
import warnings

from .collect import EPS, CellStat, CheckStat, ReportData

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


def grouped_checks(data: ReportData) -> list[tuple[CellStat | None, str, str, list[CheckStat]]]:
    """Checks grouped by cell, worst cell first; each group's checks worst first."""
    groups: dict[tuple[str, str], list[CheckStat]] = {}
    for c in data.checks:
        if c.n:
            groups.setdefault((c.notebook, c.grade_id), []).append(c)
    cells = {(c.notebook, c.grade_id): c for c in data.cells}

    def rank(key):
        members = groups[key]
        cell = cells.get(key)
        rate = cell.pass_rate if cell is not None and cell.pass_rate is not None else 1.0
        return (rate, sum(m.passed for m in members) / sum(m.n for m in members), key)

    out = []
    for key in sorted(groups, key=rank):
        members = sorted(groups[key], key=lambda c: (c.pass_rate, c.name))
        out.append((cells.get(key), key[0], key[1], members))
    return out


def plot_check_pass_rates(data: ReportData) -> str:
    groups = grouped_checks(data)
    rows = sum(len(m) for *_, m in groups) + len(groups)
    fig = _figure(9.5, 0.8 + 0.24 * rows)
    ax = fig.add_subplot()
    y = 0
    ticks, labels, heads = [], [], []
    for cell, notebook, gid, members in groups:
        heads.append(
            (
                y,
                f"{gid} ({notebook})"
                + (
                    f": {100 * cell.pass_rate:.0f}% full marks" if cell and cell.pass_rate is not None else ""
                ),
            )
        )
        y += 1
        for c in members:
            rate = 100 * (c.pass_rate or 0.0)  # grouped checks have been run at least once
            ax.barh(y, rate, color=_rate_color(c.pass_rate), height=0.75)
            ax.text(rate + 1, y, f"{rate:.0f}% ({c.passed}/{c.n})", va="center", fontsize=7)
            ticks.append(y)
            labels.append(_plain(c.title, 70))
            y += 1
    for pos, text in heads:
        ax.text(0, pos, _plain(text, 90), va="center", ha="left", fontsize=8, fontweight="bold")
        if pos:
            ax.axhline(pos - 0.5, color="#bbbbbb", linewidth=0.6)
    ax.set_yticks(ticks, labels, fontsize=7)
    ax.set_ylim(y - 0.5, -0.7)
    ax.set_xlim(0, 118)
    ax.set_xticks([0, 25, 50, 75, 100])
    ax.set_xlabel("% of students passing the check")
    ax.set_title("Checks by test cell (worst cell first, worst check first)", fontsize=10)
    return _png(fig)

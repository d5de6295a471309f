"""What the commands that compare print: calibrate (the model against published cases, and a fit's
terms), diff (one build against another) and sensitivity and build --samples (each input's ends,
and the draws, against the base). Through ``terminal.table``; only the command line prints them."""

from __future__ import annotations

import math

from ..answer.headline import FIELDS, TABLE, Field
from ..base.errors import printable
from ..model import display
from .terminal import CALIBRATION_COLUMNS, table


def calibration(rows: list[dict], summary_: dict, verbose: bool = False) -> list[str]:
    """Each case against its published figure (verbose: with its source, assumptions and notes),
    then the summary."""
    lines = table(
        CALIBRATION_COLUMNS, [[r[c] for c in CALIBRATION_COLUMNS] for r in rows], align="<<>>>>>>"
    )
    out = lines[:2]
    for r, line in zip(rows, lines[2:]):
        out.append(line)
        if r["lacks"]:
            out.append(f"    lacks: {r['lacks']}: {r['note']}")
        if verbose:
            out.append(f"    {r['quantity']}; source: {r['source']}")
            out += [f"    assumption: {a}" for a in r["assumptions"]]
            if r["note"] and not r["lacks"]:
                out.append(f"    note: {r['note']}")
    return out + [""] + calibration_summary(summary_)


def calibration_summary(s: dict) -> list[str]:
    """The calibration summary (the README and the briefs quote its first line)."""
    every = s["every_time"]
    out = [
        f"{s['within']} of {s['predicted']} published cases the model predicts are within tolerance: "
        f"{s['passed']} of {s['scored']} scored ({s['fit_cases']} of them fitted) and "
        f"{s['lacks_within']} of {s['lacks']} that name a term the model lacks.",
        f"Time predictions, every case: median error {every['median_abs_error']:.1%}, worst "
        f"{every['worst_abs_error']:.1%} ({every['cases']} cases; the scored alone: median "
        f"{s['time_median_abs_error']:.1%}, worst {s['time_worst_abs_error']:.1%}).",
        "Held out of the fit (prediction):",
    ]
    for what, st in s["held_out"].items():
        if st["cases"]:
            out.append(
                f"  {what:<13} {st['cases']:>2} case{'s' if st['cases'] != 1 else ''}: median error "
                f"{st['median_abs_error']:.1%}, worst {st['worst_abs_error']:.1%}"
            )
    out.append(
        "Held out, times and restores by engine (test cases, and each fit case predicted by the fit "
        "on the other publications): "
        + "; ".join(
            f"{e} {st['cases']} (median {st['median_abs_error']:.1%})"
            if st["cases"]
            else f"{e} none"
            for e, st in s["held_out_by_engine"].items()
        )
    )
    out.append(
        "Fitted terms: "
        + "; ".join(
            f"{e}: " + ", ".join(f"{k} = {v:g}" for k, v in terms.items())
            for e, terms in s["fitted"].items()
        )
    )
    return out


def fit(report: dict) -> list[str]:
    """calibrate --fit for one engine (``calibration.fit_report``): each term fitted anew from a neutral
    start beside the value and range the shipped engine carries, then each fit case's residual and
    leave-one-out error (the fit on the other cases predicting it)."""
    out = [
        f"{report['engine']}: {report['terms']} term(s) fitted on {len(report['cases'])} cases "
        f"({'converged' if report['converged'] else 'did NOT converge'}):"
    ]
    rows = [
        [
            n,
            f"{v:.4g}",
            f"{report['shipped'][n]:g}",
            f"{report['ranges'][n][0]:.3g} - {report['ranges'][n][1]:.3g}",
            f"engines.{report['engine']}.{report['where'][n]}",
        ]
        for n, v in report["values"].items()
    ]
    out += table(
        ["term", "fitted", "shipped", "P10 - P90 (bootstrap)", "carried in"],
        rows,
        align="<>>>",
        indent="  ",
    )
    out += table(
        ["fit case", "residual", "leave-one-out"],
        [
            [c, f"{r:+.1%}", f"{report['leave_one_out'][c]:+.1%}"]
            for c, r in report["residuals"].items()
        ],
        align="<>>",
        indent="  ",
    )
    return out


def _shown(f: Field, v) -> str:
    return f.infinite if v is None else display.value(v, f.unit)


def _delta(a, b) -> str:
    if a is None or b is None or not a:
        return ""
    change = (b - a) / abs(a)
    return f" ({'+' if change >= 0 else ''}{change:.1%})"


def _moved(f: Field, change: dict | None) -> str:
    if change is None:
        return "="
    a, b = change["old"], change["new"]
    return f"{_shown(f, a)} -> {_shown(f, b)}{_delta(a, b)}"


def diff(d: dict, verbose: bool = False) -> str:
    """The comparison as a reviewer reads it: the verdict, the inputs that changed (file:line on
    both sides), then a table of the summary lines that moved (recommendation, overhead, stall,
    bandwidth needed, total cost a month; ``=`` unchanged) and the briefs. ``verbose`` adds every
    figure that moved, line by line."""
    flipped = [h for h in d["headline"] if h["recommendation_changed"]]
    verdict = (
        f"The recommendation changed: {len(flipped)} summary line(s), {len(d['briefs'])} brief(s) (exit 1)."
        if d["recommendation_changed"]
        else "The recommendation is the same everywhere (exit 0)."
    )
    lines = [f"ckptreport diff: {printable(d['old'])} -> {printable(d['new'])}", verdict, ""]
    lines += _diff_inputs(d)
    lines += _diff_headline(d["headline"], verbose)
    if not d["briefs_compared"]:
        lines += ["", "Briefs: not compared (a side has none: built with --no-briefs?)"]
    elif d["briefs"]:
        lines += ["", "Briefs whose recommendation changed:"]
        lines += [
            f"  {printable(str(b['brief']))}: {b['old'] or '(no brief)'} -> {b['new'] or '(no brief)'}"
            for b in d["briefs"]
        ]
    return "\n".join(lines)


def _diff_inputs(d: dict) -> list[str]:
    if not d["inputs_recorded"]:
        return [
            "Inputs: not compared (a manifest from before ckptreport recorded its input values; rebuild it)",
            "",
        ]
    if not d["inputs"]:
        return ["Inputs: no change", ""]
    lines = [f"Inputs that changed ({len(d['inputs'])}):"]
    for c in d["inputs"]:
        was, now = c["old"], c["new"]
        place = (
            f"{c['file']}:{was['line'] if was else '-'} -> {c['file']}:{now['line'] if now else '-'}"
            if c["file"] != "measured"
            else "measured"
        )
        shown = (
            "(added) " + repr(now["value"])
            if was is None
            else "(removed) was " + repr(was["value"])
            if now is None
            else f"{was['value']!r} -> {now['value']!r}"
        )
        lines.append(f"  {printable(c['key'])}  [{place}]")
        lines.append(f"      {printable(shown)}")
    return lines + [""]


def _diff_headline(moved: list[dict], verbose: bool) -> list[str]:
    if not moved:
        return [
            "Headline: no summary line moved (recommendation, overhead, stall, cost, bandwidth)."
        ]
    points = {(h["recipe"], h["gpus"], h["interval_s"]) for h in moved}
    shown_fields = [
        f for f in FIELDS if f.key in TABLE and any(f.key in h["changed"] for h in moved)
    ]
    header = [
        "model",
        "sku",
        *([] if len(points) == 1 else ["recipe", "GPUs", "interval"]),
        "recommendation",
        *(f.label for f in shown_fields),
    ]
    rows = []
    for h in moved:
        rec = h["recommendation"]
        where = (
            []
            if len(points) == 1
            else [
                str(h["recipe"]),
                f"{h['gpus'] or 0:,}",
                display.of("interval_s", h["interval_s"] or 0),
            ]
        )
        rows.append(
            [
                printable(str(h["model"])),
                printable(str(h["sku"])),
                *where,
                f"{rec['old'] or '(none)'} -> {rec['new'] or '(none)'}"
                if h["recommendation_changed"]
                else f"= {rec['new']}",
                *(_moved(f, h["changed"].get(f.key)) for f in shown_fields),
            ]
        )
    at = ""
    if len(points) == 1:
        _, gpus, interval = next(iter(points))
        at = f" at {gpus or 0:,} GPUs, every {display.of('interval_s', interval or 0)}"
    lines = [
        f"Summary lines that moved{at} ({len(moved)}; '=' unchanged):",
        *table(header, rows, indent="  "),
    ]
    if verbose:
        for h in moved:
            lines += ["", f"{printable(str(h['model']))} on {printable(str(h['sku']))}:"]
            lines += [
                f"  {f.label}: {_moved(f, h['changed'][f.key])}"
                for f in FIELDS
                if f.key in h["changed"]
            ]
            for key, label in (("runner_up", "runner-up"), ("assumed_prices", "assumed prices")):
                if key in h["changed"]:
                    a, b = h["changed"][key]["old"], h["changed"][key]["new"]
                    show = (
                        (lambda v: ", ".join(v) or "none")
                        if key == "assumed_prices"
                        else (lambda v: v or "none")
                    )
                    lines.append(f"  {label}: {printable(show(a))} -> {printable(show(b))}")
    elif any(set(h["changed"]) - set(TABLE) for h in moved):
        lines.append(
            "  (storage and GPU-time costs, runner-up, assumed prices also moved: --verbose or --json)"
        )
    return lines


def _show(column: str, v) -> str:
    return "n/a" if v is None else display.of(column, v)


def _arrow(column: str, w) -> str:
    return f"{_show(column, w.low[column])} -> {_show(column, w.high[column])}"


def sensitivity(s) -> str:
    """A summary line's tornado and break-evens (``uncertainty.Sensitivity``) as a planner reads
    them in a review."""
    line = s.line
    out = [
        f"{printable(line['model'])} on {printable(line['sku'])} ({printable(line['recipe'])}, "
        f"{line['gpus']:,} GPUs, every {display.of('interval_s', line['interval_s'])})",
        f"  recommended: {s.base['option']}, {_show('total_usd', s.base['total_usd'])} over the run "
        f"({_show('total_usd_month', s.base['total_usd_month'])} a month), overhead "
        f"{_show('overhead_pct', s.base['overhead_pct'])}",
        "",
    ]
    if not s.swings:
        out.append(
            "  No uncertain input touches this line: every figure it uses is taken as certain. Give an input "
            "a range (low, high) to sweep it."
        )
        return "\n".join(out)
    out.append(
        "  Each uncertain input from its low to its high, the others held; largest swing in the cost over the "
        "run (what the recommendation minimises) first:"
    )
    header = [
        "input",
        "low -> high",
        "total over the run",
        "total a month",
        "overhead",
        "recommendation at low / high",
    ]
    rows = [
        [
            printable(w.param.label),
            f"{w.param.end_text('low')} -> {w.param.end_text('high')}",
            _arrow("total_usd", w),
            _arrow("total_usd_month", w),
            _arrow("overhead_pct", w),
            "=" if not w.flips else f"{w.low['option']} / {w.high['option']}",
        ]
        for w in s.swings
    ]
    out += table(header, rows, indent="    ") + [""]
    if s.breaks:
        out.append("  The recommendation holds unless:")
        for b in sorted(
            s.breaks, key=lambda b: abs(math.log(max(b.value, 1e-300) / max(b.param.value, 1e-300)))
        ):
            word = "rises above" if b.direction == "above" else "falls below"
            inside = " (inside its range)" if b.param.low <= b.value <= b.param.high else ""
            out.append(
                f"    {printable(b.param.label)} {word} {_show(b.param.input, b.value)}{inside}: then {b.to}"
            )
    else:
        out.append(
            "  No uncertain input flips the recommendation within a factor of 10 of its value."
        )
    return "\n".join(out)


def sampled(s) -> str:
    """The Monte Carlo summary (``answer.types.Sampled``): per summary line, how often its
    recommendation wins and the P10-P50-P90 of its cost and overhead."""
    if not s.params:
        return (
            "Monte Carlo: no input carries a range, so every draw is the same; give inputs a range "
            "(low, high) to sample them."
        )
    head = (
        f"Monte Carlo: {s.samples:,} draws of {len(s.params)} uncertain input(s) together (seed {s.seed}); "
        "per line, the recommendation's share of the draws it wins and P10 / P50 / P90 of its cost and overhead"
    )
    header = [
        "model",
        "sku",
        "recommended",
        "wins",
        "total a month P10 / P50 / P90",
        "overhead P10 / P50 / P90",
        "else recommended",
    ]
    rows = []
    for line in s.lines:
        q = line["quantiles"]
        trio = lambda m, q=q: " / ".join(_show(m, q[m][f"p{p}"]) for p in (10, 50, 90))  # noqa: E731
        others = [
            f"{name} {share:.0%}" for name, share in line["wins"].items() if name != line["option"]
        ]
        rows.append(
            [
                printable(line["model"]),
                printable(line["sku"]),
                line["option"],
                f"{line['wins'].get(line['option'], 0.0):.0%}",
                trio("total_usd_month"),
                trio("overhead_pct"),
                ", ".join(others) or "-",
            ]
        )
    return "\n".join([head, "", *table(header, rows)])

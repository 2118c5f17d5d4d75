#!/usr/bin/env python3
"""A line plot of tps over time, one line per engine, as a dependency-free SVG.

    bench/plot.py OUT.svg TITLE NAME=SERIES.txt [NAME=SERIES.txt ...]

Each SERIES.txt holds sysbench's `--report-interval=1` output; the lines
`[ 3s ] thds: 8 tps: 1234.56 ...` give the points. Lines of two numbers, `SECOND VALUE`
(lib-servers.sh's sample_status, e.g. the history length), are points too.
"""
import re
import sys

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
LINE = re.compile(r"\[\s*(\d+)s\s*\].*?tps:\s*([\d.]+)")
PAIR = re.compile(r"^\s*(\d+)\s+([\d.]+)\s*$")


def series(path):
    pts = []
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = LINE.search(line) or PAIR.match(line)
                if m:
                    pts.append((int(m.group(1)), float(m.group(2))))
    except OSError:
        pass
    return pts


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    out, title = sys.argv[1], sys.argv[2]
    lines = []
    for arg in sys.argv[3:]:
        name, _, path = arg.partition("=")
        lines.append((name, series(path)))
    w, h, left, right, top, bottom = 720, 360, 70, 150, 40, 40
    xmax = max([p[0] for _, s in lines for p in s] or [1])
    ymax = max([p[1] for _, s in lines for p in s] or [1]) * 1.1
    x = lambda t: left + (w - left - right) * t / max(xmax, 1)
    y = lambda v: h - bottom - (h - top - bottom) * v / max(ymax, 1e-9)
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{left}" y="20" font-size="14">{title}</text>',
           f'<line x1="{left}" y1="{h-bottom}" x2="{w-right}" y2="{h-bottom}" stroke="black"/>',
           f'<line x1="{left}" y1="{top}" x2="{left}" y2="{h-bottom}" stroke="black"/>',
           f'<text x="{(w-right+left)/2}" y="{h-8}" text-anchor="middle">seconds</text>']
    for i in range(5):
        v = ymax * i / 4
        svg.append(f'<text x="{left-6}" y="{y(v)+4:.1f}" text-anchor="end">{v:,.0f}</text>')
        svg.append(f'<line x1="{left}" y1="{y(v):.1f}" x2="{w-right}" y2="{y(v):.1f}" stroke="#ddd"/>')
    for t in range(0, xmax + 1, max(1, xmax // 6)):
        svg.append(f'<text x="{x(t):.1f}" y="{h-bottom+15}" text-anchor="middle">{t}</text>')
    for i, (name, pts) in enumerate(lines):
        c = COLORS[i % len(COLORS)]
        if pts:
            d = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in pts)
            svg.append(f'<polyline fill="none" stroke="{c}" stroke-width="1.5" points="{d}"/>')
        svg.append(f'<rect x="{w-right+15}" y="{top+20*i}" width="12" height="12" fill="{c}"/>')
        svg.append(f'<text x="{w-right+32}" y="{top+20*i+11}">{name}</text>')
    svg.append("</svg>")
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Load a memperf document and its tidy CSV with pandas, draw one plot.

    memperf bandwidth --json results.json --csv results.csv
    python3 examples/pandas_plot.py results.json results.csv bandwidth.png

The CSV has one row per measurement (per raw sample) and one column per
parameter; the JSON has everything else (the machine, the warnings). The
plot: each bandwidth kernel's samples, one box per kernel and thread count.
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402


def main(doc_path, csv_path, out_path):
    doc = json.load(open(doc_path))
    cpu = doc["machine"]["cpu"]["model_name"]
    df = pd.read_csv(csv_path)
    bw = df[(df.experiment == "bandwidth") & (df.table == "results") & df.hint.isna()].copy()
    # One row per sample: bytes per sample over that sample's seconds.
    bw["GB/s"] = bw.bytes_per_sample / bw.samples_s / 1e9
    bw["variant"] = bw.kernel + ", " + bw.threads.astype(int).astype(str) + "t"
    order = list(dict.fromkeys(bw.variant))
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.boxplot([bw[bw.variant == v]["GB/s"] for v in order])
    ax.set_xticks(range(1, len(order) + 1), order)
    ax.set_ylabel("GB/s (program bytes, per sample)")
    ax.set_title(f"memperf bandwidth on {doc['origin']['hostname']} ({cpu})")
    ax.tick_params(axis="x", rotation=45)
    fig.tight_layout()
    fig.savefig(out_path)
    print(f"{len(bw)} samples of {len(order)} variants -> {out_path}")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: pandas_plot.py results.json results.csv out.png")
    main(*sys.argv[1:])

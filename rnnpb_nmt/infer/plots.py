"""Figures for ``--analyze``: matplotlib without a display, and PCA by numpy SVD."""

import functools
import os

import numpy as np


@functools.cache
def pyplot():
    """matplotlib.pyplot, imported at the first figure: every command imports this module, few
    draw, and the import costs most of a second."""
    import matplotlib

    matplotlib.use("Agg")  # no display on servers and CI; must precede the pyplot import
    import matplotlib.pyplot as plt

    return plt


def pca(points, components=2):
    """Rows of ``points`` projected on their first principal components, and the fraction of
    the variance each component explains."""
    centered = points - points.mean(axis=0)
    _, singular, vt = np.linalg.svd(centered, full_matrices=False)
    variance = singular ** 2
    explained = variance[:components] / max(variance.sum(), 1e-12)
    projected = centered @ vt[:components].T
    pad = components - projected.shape[1]  # fewer points or dimensions than components
    return np.pad(projected, [(0, 0), (0, pad)]), np.pad(explained, [(0, pad)])


def figure(title, xlabel, ylabel, rows=1):
    """A titled figure of ``rows`` stacked axes sharing x; returns (figure, list of axes)."""
    fig, axes = pyplot().subplots(rows, 1, figsize=(7, 3.2 * rows + 1.3), sharex=True, squeeze=False)
    axes = list(axes[:, 0])
    fig.suptitle(title)
    axes[-1].set_xlabel(xlabel)
    axes[0].set_ylabel(ylabel)
    return fig, axes


def pca_axis_labels(ax, explained):
    ax.set_xlabel(f"principal component 1 ({100 * explained[0]:.0f}% of variance)")
    ax.set_ylabel(f"principal component 2 ({100 * explained[1]:.0f}% of variance)")


def save(fig, out_dir, name):
    """Write ``fig`` as ``out_dir/name`` (PNG) and free it; returns ``name``."""
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, name), dpi=100)
    pyplot().close(fig)
    return name

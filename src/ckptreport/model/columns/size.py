"""What a checkpoint holds: bytes per parameter by component, and its size."""

from __future__ import annotations

from ..expr import known, maximum, where
from .define import column, section

section("Size")


@column("B/param")
def consolidated_saved_bytes_per_param(
    consolidated_bytes_per_param, engine_consolidates, weights_bytes_per_param
):
    """Bytes per parameter of the consolidated copy saved: the recipe's, or the weights' dtype where the
    engine writes a consolidated copy and the recipe names none."""
    return where(
        engine_consolidates & (consolidated_bytes_per_param == 0),
        weights_bytes_per_param,
        consolidated_bytes_per_param,
    )


@column("B/param")
def recipe_bytes_per_param(
    weights_bytes_per_param,
    master_bytes_per_param,
    optimizer_bytes_per_param,
    grads_bytes_per_param,
    consolidated_saved_bytes_per_param,
):
    """Bytes the recipe saves per parameter: weights + master copy + optimizer states + gradients + a
    consolidated copy of the weights."""
    return (
        weights_bytes_per_param
        + master_bytes_per_param
        + optimizer_bytes_per_param
        + grads_bytes_per_param
        + consolidated_saved_bytes_per_param
    )


@column("B/param")
def bytes_per_param(checkpoint_size_bytes, params, model_bytes_per_param, recipe_bytes_per_param):
    """Bytes the checkpoint holds per parameter: the model's checkpoint_size / params, or its bytes_per_param,
    where given; else the recipe's."""
    return where(
        known(checkpoint_size_bytes),
        checkpoint_size_bytes / params,
        where(known(model_bytes_per_param), model_bytes_per_param, recipe_bytes_per_param),
    )


@column("bytes")
def weights_bytes(params, weights_bytes_per_param):
    """Checkpoint bytes holding the model weights."""
    return params * weights_bytes_per_param


@column("bytes")
def master_bytes(params, master_bytes_per_param):
    """Checkpoint bytes holding the fp32 master copy of the weights."""
    return params * master_bytes_per_param


@column("bytes")
def optimizer_bytes(params, optimizer_bytes_per_param):
    """Checkpoint bytes holding the optimizer states."""
    return params * optimizer_bytes_per_param


@column("bytes")
def grads_bytes(params, grads_bytes_per_param):
    """Checkpoint bytes holding gradients (only recipes that save them)."""
    return params * grads_bytes_per_param


@column("bytes")
def consolidated_bytes(params, consolidated_saved_bytes_per_param):
    """The consolidated copy of the weights one rank writes (recipes that save one, or engines that write one)."""
    return params * consolidated_saved_bytes_per_param


@column("bytes")
def ckpt_bytes(params, bytes_per_param):
    """Size of one checkpoint (MoE: every expert is saved)."""
    return params * bytes_per_param


@column("bytes")
def other_bytes(
    ckpt_bytes, weights_bytes, master_bytes, optimizer_bytes, grads_bytes, consolidated_bytes
):
    """What a model's checkpoint_size or bytes_per_param holds beyond the recipe's components (negative:
    less); 0 without an override."""
    return ckpt_bytes - (
        weights_bytes + master_bytes + optimizer_bytes + grads_bytes + consolidated_bytes
    )


@column("B/param")
def sharded_bytes_per_param(bytes_per_param, consolidated_saved_bytes_per_param):
    """Bytes per parameter the ranks split between them: all but the consolidated copy (never negative: a
    size given below the copy is all copy)."""
    return maximum(bytes_per_param - consolidated_saved_bytes_per_param, 0)

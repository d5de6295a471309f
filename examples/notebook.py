# %% [markdown]
# # ckptreport in a notebook
#
# The Python API (`ckptreport.api`) returns pandas objects: load a models directory, compute every
# scenario, ask what to buy, and see the arithmetic of one scenario. This file is a notebook in the
# "percent" format (Jupyter with jupytext, VS Code and PyCharm open it as cells); `python
# examples/notebook.py` runs it top to bottom, and the test suite does so on every change.

# %%
import ckptreport.api as ck

inputs = ck.load()  # ./models if present, else the shipped set; ck.load("my-models") for yours
print(f"{len(inputs.models)} models, {len(inputs.skus)} SKUs, {len(inputs.tiers)} tiers")

# %% [markdown]
# ## Every scenario as a frame
# One row per model x recipe x SKU x tier x strategy x GPU count x interval; the columns are the
# README's (`ck.columns()` says what each means).

# %%
frame = ck.scenarios(inputs)
print(f"{len(frame):,} scenarios x {frame.shape[1]} columns")
print(
    ck.columns()
    .loc[["ckpt_bytes", "write_s", "stall_s", "overhead_pct"], ["unit", "doc"]]
    .to_string()
)

# %% [markdown]
# ## The worked example: Llama 3 405B, 16 bytes a parameter, over a 100 GB/s file system

# %%
example = frame[
    (frame["model"] == "llama3-405b")
    & (frame["recipe"] == "adamw-bf16-grads")
    & (frame["sku"] == "dgx-h100")
    & (frame["tier"] == "pfs-100")
    & (frame["gpus"] == 1024)
    & (frame["interval_s"] == 1800)
].set_index("strategy")
print(example[["ckpt_bytes", "write_s", "stall_s", "overhead_pct"]].to_string())
# _pct columns are percent (4.46 is 4.46% of the run); the workbook stores them as fractions

# %% [markdown]
# ## What to buy
# Per model and SKU at the plan's summary point: the recommended option, its cost, the runner-up.

# %%
table = ck.recommendations(inputs)
print(
    table[
        [
            "model",
            "sku",
            "option_strategy",
            "option_tier",
            "option_engine",
            "option_total_usd_month",
            "runner_up_tier",
        ]
    ]
    .head(7)
    .to_string(index=False)
)

# %%
best = ck.recommend(
    frame, model="llama3-405b", recipe="adamw-bf16", sku="dgx-h100", gpus=1024, interval="30 min"
)
print(
    f"{best['strategy']} to {best['tier']} with {best['engine']} ({best['status']}): "
    f"${best['total_usd_month']:,.0f} a month; runner-up {best['runner_up_tier']} "
    f"(+${best['runner_up_extra_usd']:,.0f} over the run)"
)

# %% [markdown]
# ## The arithmetic of one scenario, every input with its source

# %%
e = ck.explain(
    inputs,
    "llama3-405b",
    "dgx-h100",
    "pfs-100",
    gpus=1024,
    interval="30 min",
    recipe="adamw-bf16-grads",
)
print(e.headline)
print(
    e.inputs.set_index("name")
    .loc[["params", "storage_nic_GBps", "tier_write_GBps"], ["display", "basis", "file", "line"]]
    .to_string()
)
print(e.steps.loc[["write_s", "overhead_pct"], ["formula", "display"]].to_string())

# %% [markdown]
# ## Sweeping a figure: how the stall falls with the tier's bandwidth
# The frame holds every tier of the plan; group by it.

# %%
sync = frame[
    (frame["model"] == "llama3-405b")
    & (frame["recipe"] == "adamw-bf16-grads")
    & (frame["sku"] == "dgx-h100")
    & (frame["gpus"] == 1024)
    & (frame["interval_s"] == 1800)
    & (frame["strategy"] == "sync")
]
print(
    sync.sort_values("tier_write_GBps")[
        ["tier", "tier_write_GBps", "stall_s", "overhead_pct"]
    ].to_string(index=False)
)

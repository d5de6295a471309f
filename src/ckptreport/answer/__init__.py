"""The answer: everything an output shows, computed once from the model (``report``): the
recommendation per model and SKU, the briefs' data, how sure each answer is (``uncertainty``),
calibration against published runs, ``explain`` and the review page's data. Renderers format it."""

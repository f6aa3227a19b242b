"""`compliance-api classify bulk`: a CSV of engagements classified through the batch endpoints, over HTTP against any
deployment (`over_http.py`) or directly in this installation's database (`in_database.py`).

Both ways share the file (`rows.py`: the CSV in, each row a request body or its error, the batches and their
Idempotency-Keys, the results CSV out) and the run (`runner.py`: batches sent, answers matched to their rows).
"""

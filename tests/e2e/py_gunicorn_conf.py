"""py_gunicorn_conf.py - gunicorn's config for tests/e2e/py_gunicorn.sh:
each worker checks what it kept as it exits (a recycled one too)."""


def worker_exit(server, worker):
    import py_gunicorn_app
    py_gunicorn_app.log_checked()

# Thin wrappers over scripts/: each target is one script.
.PHONY: run test check bench

run:
	scripts/run

test:
	scripts/test

check:
	scripts/check

# make bench NAME=upsert ARGS="--rows 5000"
bench:
	scripts/bootstrap test && .venv/bin/python -m bench $(NAME) $(ARGS)

# Thin wrappers over scripts/: each target is one script.
.PHONY: demo run test check bench fuzz

demo:
	scripts/demo

run:
	scripts/run

test:
	scripts/test

check:
	scripts/check

# 10^5 generated inputs to every parser and server (docs/testing.md).
fuzz:
	scripts/fuzz

# make bench NAME=upsert ARGS="--rows 5000"
bench:
	scripts/bootstrap test && .venv/bin/python -m bench $(NAME) $(ARGS)

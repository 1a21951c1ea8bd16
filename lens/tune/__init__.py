"""`lens tune`: node tuning as a declarative policy. Rules as data (`rules.py`), reading and
writing sysctls and open-file limits (`sysctl.py`, `nofile.py`), the diff that decides whether
anything needs writing (`planning.py`). Its role wiring goes in `lens/roles/tune/`.
"""

__all__: list[str] = []

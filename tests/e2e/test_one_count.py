"""One count, one meaning: on the server (graphs replayed per
request, whose node runs the analyzer makes are no records of the trace),
"records" is the same number in report (JSON), html and export as in
`dump --summary`, and "DEVICE records" the same in report (text, JSON
via html) and html as dump's device count and export's device table."""
import json
import re
import sqlite3
from gtest import *


def test_records_and_device_records():
    _, trace = record([prog("server"), "--requests", "20"])
    summary = run([GPUTRACE, "dump", "--summary", trace], base_env(), check_rc=0).stdout
    records = int(re.search(r"^records: (\d+)", summary, re.M).group(1))
    device = int(re.search(r"^  device +(\d+)$", summary, re.M).group(1))
    if not device:
        raise AssertionError("no DEVICE records: %s" % summary)
    rep = json.loads(run([GPUTRACE, "report", "--json", trace], base_env(), check_rc=0).stdout)
    eq(rep["records"], records, "report's records as dump's")
    text = run([GPUTRACE, "report", trace], base_env(), check_rc=0).stdout
    eq(int(re.search(r"device timing: (\d+) DEVICE records", text).group(1)), device,
       "report's DEVICE records as dump's")
    page = os.path.join(TMP, "server.html")
    run([GPUTRACE, "html", "--force", "-o", page, trace], base_env(), check_rc=0)
    with open(page) as f:
        html = f.read()
    eq(int(re.search(r">records</b><span>(\d+)<", html).group(1)), records,
       "html's records as dump's")
    eq(int(re.search(r"(\d+) DEVICE records", html).group(1)), device,
       "html's DEVICE records as dump's")
    db = os.path.join(TMP, "server.sqlite")
    run([GPUTRACE, "export", "--force", "-o", db, trace], base_env(), check_rc=0)
    con = sqlite3.connect(db)
    eq(int(con.execute("select value from metadata where key = 'records'").fetchone()[0]),
       records, "export's records as dump's")
    eq(con.execute("select count(*) from device").fetchone()[0], device,
       "export's DEVICE records as dump's")


if __name__ == "__main__":
    main([test_records_and_device_records])

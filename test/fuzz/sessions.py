"""The targeted fuzzer's connections (one per role, reopened when lost) and
what can stop a test: the connection lost, or a shape of test skipped
after it crashed the server often enough."""

import time

import psycopg2

STATEMENT_TIMEOUT = "2s"


class Lost(Exception):
    """The connection went away while a query ran."""


class Skip(Exception):
    """This shape of test crashed the server often enough: not again."""


class Session:
    """One connection, reopened when lost."""

    def __init__(self, fuzzer, user):
        self.f = fuzzer
        self.user = user
        self.conn = None

    def connect(self):
        if self.conn is not None and not self.conn.closed:
            return
        # The server may be restarting after a crash: wait for it.
        deadline = time.time() + 60
        while True:
            try:
                self.conn = psycopg2.connect(host=self.f.args.host, port=self.f.args.port,
                                             dbname=self.f.args.dbname, user=self.user,
                                             application_name="idgen-fuzz",
                                             options="-c statement_timeout=%s" % STATEMENT_TIMEOUT)
                break
            except psycopg2.OperationalError as e:
                if time.time() > deadline:
                    raise SystemExit("cannot connect to the server: %s" % e)
                time.sleep(0.2)
        self.conn.autocommit = True

    def close(self):
        if self.conn is not None:
            try:
                self.conn.close()
            except psycopg2.Error:
                pass
        self.conn = None


def shorten(sql, n=300):
    sql = " ".join(sql.split())
    return sql if len(sql) <= n else sql[:n] + "..."

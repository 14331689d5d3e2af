"""A Redis lock of one's own for the harness (docs/own-lock.md): SET NX PX takes it,
a compare-and-delete script gives it up; no fencing token, no renewal."""

import secrets
import time

import redis

from workloads.lock import Held, LockLost

DELETE_IF_MINE = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end"
)


class ExampleLock:
    def __init__(self, endpoints, settings):
        host, _, port = endpoints[0].rpartition(":")
        self.redis = redis.Redis(host=host, port=int(port), socket_timeout=settings["timeout"])

    def acquire(self, name, ttl, wait):
        owner, deadline = secrets.token_hex(16), time.monotonic() + wait
        while not self.redis.set(name, owner, nx=True, px=int(ttl * 1000)):
            if time.monotonic() > deadline:
                return None
            time.sleep(0.05)
        return Held(token=None, handle=owner)

    def release(self, name, held):
        if not self.redis.eval(DELETE_IF_MINE, 1, name, held.handle):
            raise LockLost(f"{name} no longer held {held.handle}")

    def close(self):
        self.redis.close()


def make(endpoints, settings):
    return ExampleLock(endpoints, settings)

"""The generated Python client (clients/python) through an Owner's day, against a live gateway.

Run by clients/python-client.test.ts with PYTHONPATH=clients/python, SWITCHYARD_URL and
SWITCHYARD_KEY (an Owner key). Prints one JSON line per step; after creating the subaccount it
waits for a line on stdin, so the test can record proxy usage before the bill is read.
Any failed expectation raises, which exits non-zero with the traceback on stderr.
"""
import json
import os
import sys

import switchyard_client as sy
from switchyard_client.rest import ApiException

SECRET = "sk-proj-python-client-0123456789abcdef"


def report(step, **facts):
    print(json.dumps(dict(step=step, **facts)), flush=True)


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def client(key):
    cfg = sy.Configuration(host=os.environ["SWITCHYARD_URL"])
    cfg.access_token = key
    return sy.ApiClient(cfg)


def main():
    owner = client(os.environ["SWITCHYARD_KEY"])
    keys = sy.ProviderKeysApi(owner)

    body = sy.ProviderKeyCreate(name="py-primary", level=3, provider="https://api.anthropic.com",
                                secret_key=SECRET, status=True,
                                config=sy.ProviderKeyCreateConfig(provider_type="standard"))
    result, status, _ = keys.keys_create_with_http_info(body)
    expect(status == 201, "create answers 201, got %s" % status)
    expect(result.action == "add" and result.key.secret_hint == "cdef", "created key %s" % result)
    expect(SECRET not in json.dumps(owner.sanitize_for_serialization(result)), "SecretKey never comes back")
    key_id = result.key.id
    listed, _, headers = keys.keys_list_with_http_info(level=3, size=1)
    expect(headers["X-Total-Count"] == "1" and [k.id for k in listed] == [key_id], "list by Level")
    report("key", id=key_id, level_mapper=result.level_mapper, total=headers["X-Total-Count"])

    try:
        keys.keys_create(sy.ProviderKeyCreate(provider="https://api.anthropic.com", secret_key="x" * 25,
                                              config=sy.ProviderKeyCreateConfig(provider_type="azure")))
        raise AssertionError("an azure key without deployments must be refused")
    except ApiException as e:
        error = json.loads(e.body)["error"]
        expect(e.status == 400 and error["type"] == "invalid_request_error", "400 envelope: %s" % e.body)
        report("rejected", status=e.status, message=error["message"])

    accounts = sy.AccountsApi(owner)
    added, status, _ = accounts.accounts_create_with_http_info(
        sy.AccountCreate(name="py-client-user", email="py-client@example.test", credit_granted=40))
    expect(status == 201 and added.user.secret_key.startswith("sk-Xvs"), "create subaccount")
    user = added.user
    updated = accounts.accounts_update(str(user.id), sy.AccountsUpdateBody(alias="Python client", rpm=30))
    expect(updated.action == "update" and updated.user.alias == "Python client" and updated.user.rpm == 30, "update")
    children, _, headers = accounts.accounts_children_with_http_info(size=10)
    expect(headers["X-Total-Count"] == "1" and children[0].name == "py-client-user", "list children")
    report("subaccount", id=user.id, owner_id=user.owner_id, dna=user.dna, name=user.name, email=user.email,
           key=user.secret_key, total=headers["X-Total-Count"])

    sys.stdin.readline()  # the test records usage for the subaccount meanwhile

    bill = sy.BillingApi(client(user.secret_key)).billing_bill()
    expect(bill.object == "bill_info" and bill.total_requests == 1, "bill: %s" % bill)
    report("bill", total_requests=bill.total_requests, total_credit_used=bill.total_credit_used,
           days=[d.date for d in bill.daily_costs])

    removed = accounts.accounts_remove(str(user.id))
    expect(removed.action == "delete" and removed.user.id == user.id, "delete subaccount")
    gone = keys.keys_remove(str(key_id))
    expect(gone.action == "delete", "delete key")
    report("done")


if __name__ == "__main__":
    main()

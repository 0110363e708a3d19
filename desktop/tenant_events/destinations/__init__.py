"""Alert destinations: Apprise URLs that alerts are sent to, durably, with retries and a dedup key.

urls.py      parse, mask and fingerprint an Apprise URL (the masked form is all a file or a log ever shows)
registry.py  add, edit, remove, list: the settings file holds the masked URL, the keyring the whole one
message.py   what a delivery says: reads like the window, with the link that opens the alert in the app
send.py      one attempt through Apprise, classified: delivered, retry (when), or stop (why)
send_thread.py  that attempt on a daemon thread, waited for until its deadline and a grace
worker.py    the delivery worker over a tenant database's outbox (store/outbox.py)
shared_deliveries.py  what the worker asks of a team's shared delivery state (the relays' outbox on the hub)
"""

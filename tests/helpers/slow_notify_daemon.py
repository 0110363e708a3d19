"""A notification daemon on the session bus that answers "what can you do" only once a line comes on its stdin: a
daemon too busy to answer in time, for real on D-Bus. Says `ready` once it owns org.freedesktop.Notifications."""

from __future__ import annotations

import asyncio
import sys

from dbus_fast import Message, MessageType
from dbus_fast.aio import MessageBus

NAME = "org.freedesktop.Notifications"
INTROSPECTION = f"""<node><interface name="{NAME}">
<method name="GetCapabilities"><arg type="as" direction="out"/></method>
<method name="Notify"><arg type="s"/><arg type="u"/><arg type="s"/><arg type="s"/><arg type="s"/><arg type="as"/>
<arg type="a{{sv}}"/><arg type="i"/><arg type="u" direction="out"/></method>
<method name="CloseNotification"><arg type="u"/></method>
<method name="GetServerInformation"><arg type="s" direction="out"/><arg type="s" direction="out"/>
<arg type="s" direction="out"/><arg type="s" direction="out"/></method>
<signal name="NotificationClosed"><arg type="u"/><arg type="u"/></signal>
<signal name="ActionInvoked"><arg type="u"/><arg type="s"/></signal>
</interface></node>"""


async def main() -> None:
    bus = await MessageBus().connect()
    loop = asyncio.get_running_loop()
    answering = loop.run_in_executor(None, sys.stdin.readline)
    held: set[asyncio.Task[None]] = set()

    async def answer_later(call: Message) -> None:
        await answering
        bus.send(Message.new_method_return(call, "as", [["body", "actions"]]))

    def handle(call: Message) -> Message | bool | None:
        if call.message_type != MessageType.METHOD_CALL:
            return None
        if call.member == "Introspect":
            return Message.new_method_return(call, "s", [INTROSPECTION])
        if call.interface != NAME:
            return None
        if call.member == "GetCapabilities":
            task = asyncio.ensure_future(answer_later(call))
            held.add(task)
            task.add_done_callback(held.discard)
            return True
        if call.member == "GetServerInformation":
            return Message.new_method_return(call, "ssss", ["slow", "tests", "1", "1.2"])
        if call.member == "Notify":
            return Message.new_method_return(call, "u", [1])
        return Message.new_method_return(call)

    bus.add_message_handler(handle)
    await bus.request_name(NAME)
    print("ready", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main())

defmodule MsgbenchEx.TargetTest do
  use ExUnit.Case
  alias MsgbenchEx.WebSocket

  test "a ring counts every hop, lap and link" do
    result = MsgbenchEx.Ring.measure(%{"params" => %{"n" => 50, "m" => 3, "payload" => "BOO!"}, "options" => %{}})
    assert result.verify == %{hops: 150, laps: 3, links: 50}
  end

  test "fanin carries exit signals to a receiver that survives them" do
    mix = [
      %{"percent" => 50, "kind" => "exit_signal", "size" => 3},
      %{"percent" => 50, "kind" => "message", "size" => 3}
    ]

    params = %{"senders" => 2, "duration_ms" => 30, "mix" => mix, "memory_limit_mb" => 8192}
    %{verify: v} = MsgbenchEx.Fanin.measure(%{"params" => params, "options" => %{"message_queue_data" => "off_heap"}})
    assert v.sent_exit_signal > 0 and v.sent_message > 0
    assert v.received_exit_signal == v.sent_exit_signal and v.received_message == v.sent_message
    assert v.receiver_alive == 1
  end

  test "chat delivers every message within its group, never to its sender" do
    params = %{
      "groups" => 3,
      "clients_per_group" => 2,
      "duration_s" => 0.2,
      "think_ms" => 0,
      "listener_delay_ms" => 0,
      "message" => "binary",
      "history" => 2,
      "drain_timeout_s" => 5
    }

    %{verify: v} = MsgbenchEx.Chat.measure(%{"params" => params, "options" => %{}})
    assert v.sent > 0 and v.received == v.sent
    assert v.cross_group == 0 and v.self_deliveries == 0 and v.users == 6
  end

  test "masked client frames of every length form are parsed, split anyhow" do
    key = <<1, 2, 3, 4>>

    for size <- [0, 5, 125, 126, 70_000] do
      payload = :binary.copy(<<7>>, size)
      masked = :crypto.exor(payload, binary_part(:binary.copy(key, div(size, 4) + 1), 0, size))

      len =
        cond do
          size < 126 -> <<1::1, size::7>>
          size < 65_536 -> <<1::1, 126::7, size::16>>
          true -> <<1::1, 127::7, size::64>>
        end

      frame = <<1::1, 0::3, 2::4>> <> len <> key <> masked
      short = binary_part(frame, 0, byte_size(frame) - 1)
      assert {[], ^short, nil} = WebSocket.parse(short)
      assert {[{:binary, ^payload}], "rest", nil} = WebSocket.parse(frame <> "rest")
    end
  end

  test "a fragmented message comes out whole, with a ping between its fragments" do
    fragment = fn fin, op, payload -> <<fin::1, 0::3, op::4, 0::1, byte_size(payload)::7>> <> payload end

    buffer =
      fragment.(0, 1, "{\"g\": 1") <> fragment.(0, 0, ", \"u\"") <> fragment.(1, 9, "p") <> fragment.(1, 0, ": 5}")

    assert {[{:ping, "p"}, {:text, "{\"g\": 1, \"u\": 5}"}], "", nil} = WebSocket.parse(buffer)
    # Cut after the first fragment: nothing yet, and the fragment kept for the next read.
    first = fragment.(0, 1, "{\"g\"")
    assert {[], "", {:text, ["{\"g\""]}} = WebSocket.parse(first)
    assert {[{:close, ""}], "", nil} = WebSocket.parse(fragment.(1, 0, "orphan"))
  end

  test "server frames are unmasked with the length in the right form" do
    assert IO.iodata_to_binary(WebSocket.encode(:text, "hi")) == <<0x81, 2, "hi">>

    assert <<0x82, 126, 300::16, _::binary-size(300)>> =
             IO.iodata_to_binary(WebSocket.encode(:binary, :binary.copy("a", 300)))
  end
end

defmodule MsgbenchEx.ChatServerTest do
  use ExUnit.Case
  alias MsgbenchEx.ChatServer.Room

  setup_all do
    {:ok, _} = Registry.start_link(keys: :unique, name: MsgbenchEx.ChatServer.Rooms)
    {:ok, _} = DynamicSupervisor.start_link(strategy: :one_for_one, name: MsgbenchEx.ChatServer.RoomSupervisor)
    :ok
  end

  defp member(room, test) do
    spawn(fn ->
      :ok = Room.join(room)
      send(test, {:joined, self()})
      relay(test)
    end)
  end

  defp relay(test) do
    receive do
      {:deliver, kind, payload} -> send(test, {:got, self(), kind, payload})
      {:pass, kind, payload, room} -> Room.pass(room, kind, payload)
    end

    relay(test)
  end

  test "one room per group, and a payload goes to another member, never back to its sender" do
    room = Room.whereis(7)
    assert Room.whereis(7) == room
    refute Room.whereis(8) == room
    [a, b] = for _ <- 1..2, do: member(room, self())
    for pid <- [a, b], do: assert_receive({:joined, ^pid})

    for _ <- 1..20, do: send(a, {:pass, :binary, "hi", room})
    for _ <- 1..20, do: assert_receive({:got, ^b, :binary, "hi"})
    refute_received {:got, ^a, _, _}
  end

  test "a member that dies leaves its room; the others still reach each other" do
    room = Room.whereis(9)
    [a, b, c] = for _ <- 1..3, do: member(room, self())
    for pid <- [a, b, c], do: assert_receive({:joined, ^pid})
    Process.exit(a, :kill)
    # The DOWN and the passes come from different senders: give the room time to see it.
    Process.sleep(50)
    for _ <- 1..20, do: send(b, {:pass, :text, "x", room})
    for _ <- 1..20, do: assert_receive({:got, ^c, :text, "x"})
  end
end

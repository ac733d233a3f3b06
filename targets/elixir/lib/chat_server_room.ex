defmodule MsgbenchEx.ChatServer.Room do
  @moduledoc """
  A group of the chat server: members by slot (slot -> pid and pid -> slot, the last
  member moved into a leaver's slot), so a uniform pick among the others is O(1).
  Members are monitored: a connection that dies leaves its group.
  """
  use GenServer

  @spec whereis(non_neg_integer()) :: pid()
  def whereis(group) do
    name = {:via, Registry, {MsgbenchEx.ChatServer.Rooms, group}}

    case DynamicSupervisor.start_child(MsgbenchEx.ChatServer.RoomSupervisor, {__MODULE__, name}) do
      {:ok, pid} -> pid
      {:error, {:already_started, pid}} -> pid
    end
  end

  @spec start_link(GenServer.name()) :: GenServer.on_start()
  def start_link(name), do: GenServer.start_link(__MODULE__, nil, name: name)

  @spec join(pid()) :: :ok
  def join(room), do: GenServer.call(room, {:join, self()})

  @spec pass(pid(), :text | :binary, binary()) :: :ok
  def pass(room, kind, payload), do: GenServer.cast(room, {:pass, self(), kind, payload})

  @impl true
  def init(nil), do: {:ok, %{by_slot: %{}, by_pid: %{}}}

  @impl true
  def handle_call({:join, pid}, _from, state) do
    Process.monitor(pid)
    slot = map_size(state.by_slot)
    {:reply, :ok, %{by_slot: Map.put(state.by_slot, slot, pid), by_pid: Map.put(state.by_pid, pid, slot)}}
  end

  @impl true
  def handle_cast({:pass, from, kind, payload}, state) do
    size = map_size(state.by_slot)

    with %{^from => slot} when size > 1 <- state.by_pid do
      pick = :rand.uniform(size - 1) - 1
      pick = if pick >= slot, do: pick + 1, else: pick
      send(Map.fetch!(state.by_slot, pick), {:deliver, kind, payload})
    end

    {:noreply, state}
  end

  @impl true
  def handle_info({:DOWN, _ref, :process, pid, _reason}, state) do
    case Map.pop(state.by_pid, pid) do
      {nil, _} ->
        {:noreply, state}

      {slot, by_pid} ->
        last = map_size(state.by_slot) - 1
        moved = Map.fetch!(state.by_slot, last)
        by_slot = state.by_slot |> Map.delete(last) |> then(&if slot == last, do: &1, else: Map.put(&1, slot, moved))
        by_pid = if slot == last, do: by_pid, else: Map.put(by_pid, moved, slot)
        {:noreply, %{by_slot: by_slot, by_pid: by_pid}}
    end
  end
end

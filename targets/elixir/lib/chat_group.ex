defmodule MsgbenchEx.Chat.Group do
  @moduledoc """
  A chat group: a GenServer that knows its members (by position) and passes each
  message to a member other than its sender, chosen uniformly at random.
  """
  use GenServer

  @spec start_link({non_neg_integer(), :on_heap | :off_heap}) :: GenServer.on_start()
  def start_link({index, queue}),
    do: GenServer.start_link(__MODULE__, index, spawn_opt: [message_queue_data: queue])

  @spec join(pid(), pid()) :: non_neg_integer()
  def join(group, user), do: GenServer.call(group, {:join, user})

  @impl true
  def init(index), do: {:ok, %{index: index, members: %{}, size: 0}}

  @impl true
  def handle_call({:join, user}, _from, state) do
    {:reply, state.size, %{state | members: Map.put(state.members, state.size, user), size: state.size + 1}}
  end

  @impl true
  def handle_cast({:chat, from, message}, %{size: size} = state) when size > 1 do
    pick = :rand.uniform(size - 1) - 1
    pick = if pick >= from, do: pick + 1, else: pick
    MsgbenchEx.Chat.User.deliver(Map.fetch!(state.members, pick), message)
    {:noreply, state}
  end

  def handle_cast({:chat, _from, _message}, state), do: {:noreply, state}
end

defmodule MsgbenchEx.Chat.User do
  @moduledoc """
  A chat user: a GenServer holding its last `history` messages. Its client's sends
  go through it to the group; deliveries from the group are stored and handed on to
  its client.
  """
  use GenServer

  @spec start_link({pid(), non_neg_integer()}) :: GenServer.on_start()
  def start_link({group, history}), do: GenServer.start_link(__MODULE__, {group, history})

  @spec attach(pid(), pid(), non_neg_integer()) :: :ok
  def attach(user, client, position), do: GenServer.call(user, {:attach, client, position})

  @spec chat(pid(), term()) :: :ok
  def chat(user, message), do: GenServer.cast(user, {:send, message})

  @spec deliver(pid(), term()) :: :ok
  def deliver(user, message), do: GenServer.cast(user, {:deliver, message})

  @impl true
  def init({group, limit}),
    do: {:ok, %{group: group, client: nil, position: nil, history: :queue.new(), length: 0, limit: limit}}

  @impl true
  def handle_call({:attach, client, position}, _from, state),
    do: {:reply, :ok, %{state | client: client, position: position}}

  @impl true
  def handle_cast({:send, message}, state) do
    GenServer.cast(state.group, {:chat, state.position, message})
    {:noreply, state}
  end

  def handle_cast({:deliver, message}, state) do
    send(state.client, {:delivery, message})
    {:noreply, remember(state, message)}
  end

  defp remember(%{limit: 0} = state, _message), do: state

  defp remember(%{length: length, limit: limit} = state, message) when length < limit,
    do: %{state | history: :queue.in(message, state.history), length: length + 1}

  defp remember(state, message), do: %{state | history: :queue.in(message, :queue.drop(state.history))}
end

defmodule MsgbenchEx.ChatServer.Connection do
  @moduledoc """
  One WebSocket connection of the chat server: a GenServer owning its socket
  (`active: :once`). Its first frame makes it a user (`join`: it joins its group's
  room and keeps the last `history` payloads delivered to it) or the stats
  connection (`stats`). A user's frames go to its room verbatim, with their opcode.
  """
  use GenServer, restart: :temporary
  alias Msgbench.Kit.{JSON, Measure}
  alias MsgbenchEx.ChatServer.Room
  alias MsgbenchEx.WebSocket

  @spec start(:gen_tcp.socket()) :: GenServer.on_start()
  def start(socket), do: GenServer.start(__MODULE__, socket)

  @impl true
  def init(socket),
    do: {:ok, %{socket: socket, buffer: "", partial: nil, role: :new, history: :queue.new(), kept: 0, limit: 0}}

  @impl true
  def handle_info(:handshake, state) do
    case WebSocket.handshake(state.socket) do
      {:ok, rest} -> frames(%{state | buffer: rest})
      {:error, _} -> {:stop, :normal, state}
    end
  end

  def handle_info({:tcp, _socket, data}, state), do: frames(%{state | buffer: state.buffer <> data})
  def handle_info({:tcp_closed, _socket}, state), do: {:stop, :normal, state}
  def handle_info({:tcp_error, _socket, _reason}, state), do: {:stop, :normal, state}

  def handle_info({:deliver, kind, payload}, state) do
    _ = :gen_tcp.send(state.socket, WebSocket.encode(kind, payload))
    {:noreply, remember(state, payload)}
  end

  @impl true
  def terminate(_reason, %{role: {:user, _room}}), do: :counters.sub(connections(), 1, 1)
  def terminate(_reason, _state), do: :ok

  defp connections, do: :persistent_term.get(:msgbench_connections)

  defp frames(state) do
    {frames, rest, partial} = WebSocket.parse(state.buffer, state.partial)

    case Enum.reduce_while(frames, %{state | buffer: rest, partial: partial}, &frame/2) do
      {:closed, state} ->
        {:stop, :normal, state}

      state ->
        :ok = :inet.setopts(state.socket, active: :once)
        {:noreply, state}
    end
  end

  defp frame({kind, payload}, %{role: {:user, room}} = state) when kind in [:text, :binary] do
    Room.pass(room, kind, payload)
    {:cont, state}
  end

  defp frame({:text, text}, %{role: :new} = state) do
    case JSON.decode(text) do
      {:ok, %{"join" => %{"group" => group, "user" => user, "history" => history}}} ->
        room = Room.whereis(group)
        :ok = Room.join(room)
        :counters.add(connections(), 1, 1)
        reply(state, JSON.encode(%{joined: user}))
        {:cont, %{state | role: {:user, room}, limit: history}}

      {:ok, %{"stats" => true}} ->
        reply(state, stats())
        {:cont, %{state | role: :stats}}

      _ ->
        {:halt, {:closed, state}}
    end
  end

  defp frame({:text, _}, %{role: :stats} = state) do
    reply(state, stats())
    {:cont, state}
  end

  defp frame({:ping, payload}, state) do
    _ = :gen_tcp.send(state.socket, WebSocket.encode(:pong, payload))
    {:cont, state}
  end

  defp frame({:pong, _}, state), do: {:cont, state}

  defp frame({:close, _}, state) do
    _ = :gen_tcp.send(state.socket, WebSocket.encode(:close, ""))
    {:halt, {:closed, state}}
  end

  defp frame(_other, state), do: {:halt, {:closed, state}}

  defp reply(state, text), do: :gen_tcp.send(state.socket, WebSocket.encode(:text, text))

  defp remember(%{limit: 0} = state, _payload), do: state

  defp remember(%{kept: kept, limit: limit} = state, payload) when kept < limit,
    do: %{state | history: :queue.in(payload, state.history), kept: kept + 1}

  defp remember(state, payload), do: %{state | history: :queue.in(payload, :queue.drop(state.history))}

  defp stats do
    memory = for {kind, bytes} <- :erlang.memory(), into: %{}, do: {"#{kind}_bytes", bytes}
    {gcs, words, _} = :erlang.statistics(:garbage_collection)
    {{:input, io_in}, {:output, io_out}} = :erlang.statistics(:io)

    runtime =
      Map.merge(memory, %{
        "gc_count" => gcs,
        "gc_reclaimed_words_count" => words,
        "io_in_bytes" => io_in,
        "io_out_bytes" => io_out
      })

    JSON.encode(%{
      peak_rss_bytes: Measure.peak_rss_bytes(),
      rss_bytes: Measure.rss_bytes(),
      cpu_ns: Measure.cpu_ns(),
      connections: :counters.get(connections(), 1),
      processes: :erlang.system_info(:process_count),
      runtime: runtime
    })
  end
end

defmodule MsgbenchEx.SocketOpen do
  @moduledoc """
  socket's open loop (echo at rate > 0), one connection: a writer process sends
  message i at its intended time, start + i * interval (interval = sockets / rate),
  never waiting for echoes, while the connection's owner reads the echoes in order
  (passive `:gen_tcp.recv`), checks each as the closed loop does and records its
  latency from that intended time. A writer or server that falls behind is charged
  for the wait it caused (coordinated omission corrected); the reader knows message
  i's intended time from its index, so the framing is the closed loop's.
  """
  alias Msgbench.Kit.{Error, Histogram, Measure}
  alias MsgbenchEx.Socket

  # BEAM timers count whole ms and a sleep of N ms returns after about N + 1 ms, so
  # the writer sleeps until @spin_ns before the intended time and spins the rest,
  # yielding its scheduler at each turn. Below 2 ms between messages (above 500
  # round trips/s per socket) it spins all the time: a scheduler thread stays busy.
  @spin_ns 2_000_000
  @io_idle_ms 60_000

  @doc "Message i's intended send time (ns) when the first is due at start."
  @spec intended(integer(), float(), non_neg_integer()) :: integer()
  def intended(start, interval_ns, i), do: start + round(i * interval_ns)

  @doc "Returns once `Measure.now_ns()` >= due: a sleep in whole ms, then a yielding spin."
  @spec wait_until(integer()) :: :ok
  def wait_until(due) do
    rest = due - Measure.now_ns()

    cond do
      rest >= @spin_ns + 1_000_000 ->
        Process.sleep(div(rest - @spin_ns, 1_000_000))
        wait_until(due)

      rest > 0 ->
        :erlang.yield()
        wait_until(due)

      true ->
        :ok
    end
  end

  @doc """
  One socket's open-loop sequence at `interval_ns` between messages, run by the
  socket's owner: the closed loop's counts, with `latency` (a `Histogram`).
  `same?` says whether an echo equals what was sent (check_content).
  """
  @spec run(:gen_tcp.socket(), tuple(), pos_integer(), float(), (term(), term() -> boolean())) :: map()
  def run(socket, payloads, messages, interval_ns, same?) do
    owner = self()
    # Every payload is this long, and so is an echo that equals one (same?).
    frame_bytes = Socket.byte_size_of(Socket.payload(payloads, 0))
    start = Measure.now_ns()
    writer = spawn_link(fn -> write(owner, socket, payloads, messages, start, interval_ns) end)
    # A quiet socket between two messages is not a stalled one.
    idle_ms = @io_idle_ms + ceil(interval_ns / 1_000_000)

    {mismatches, received_bytes, latency} =
      Enum.reduce(0..(messages - 1), {0, 0, %Histogram{}}, fn i, {mismatches, bytes, latency} ->
        case :gen_tcp.recv(socket, 0, idle_ms) do
          {:ok, back} ->
            latency = Histogram.record(latency, Measure.now_ns() - intended(start, interval_ns, i))

            if same?.(back, Socket.payload(payloads, i)),
              do: {mismatches, bytes + frame_bytes, latency},
              else: {mismatches + 1, bytes + IO.iodata_length(back), latency}

          {:error, reason} ->
            # A writer that failed shut the socket down to end this wait: its reason is the story.
            receive do
              {:write_failed, ^writer, why} -> Error.internal("sending message #{i + 1} or later: #{inspect(why)}")
            after
              0 -> Error.internal("echo #{i + 1} of #{messages}: #{inspect(reason)}")
            end
        end
      end)

    elapsed = Measure.now_ns() - start

    receive do
      {:written, ^writer} ->
        %{
          elapsed_ns: elapsed,
          sent: messages,
          sent_bytes: messages * frame_bytes,
          received: messages,
          received_bytes: received_bytes,
          mismatches: mismatches,
          latency: latency
        }
    after
      @io_idle_ms -> Error.internal("the writer did not finish within #{div(@io_idle_ms, 1000)} s of the last echo")
    end
  end

  # Every message at its intended time, or at once when late (none is skipped).
  defp write(owner, socket, payloads, messages, start, interval_ns) do
    written =
      Enum.reduce_while(0..(messages - 1), :ok, fn i, :ok ->
        :ok = wait_until(intended(start, interval_ns, i))

        case :gen_tcp.send(socket, Socket.payload(payloads, i)) do
          :ok ->
            {:cont, :ok}

          {:error, reason} ->
            send(owner, {:write_failed, self(), reason})
            :gen_tcp.shutdown(socket, :read_write)
            {:halt, :failed}
        end
      end)

    if written == :ok, do: send(owner, {:written, self()})
  end
end

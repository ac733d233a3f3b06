defmodule MsgbenchEx.Socket do
  @moduledoc """
  socket (spec/workloads/socket.json), the client half: starts the server half
  (`MsgbenchEx.SocketServer`, or MSGBENCH_PEER_COMMAND), then one Task per
  connection over `:gen_tcp` with `{packet, 4}` framing (the 4-byte length the spec
  wants, added and stripped by the driver) and passive reads (`active: false`), as
  the seed. Echo sends a message and waits for its echo; flow sends them all, shuts
  its side down and waits for the server's one-message ACK. Echo at rate > 0 is the
  open loop (`MsgbenchEx.SocketOpen`): a paced writer beside each reading Task.
  """
  alias Msgbench.Kit.{Error, Histogram, Measure, Options, Peer}
  alias MsgbenchEx.SocketOpen

  @ack <<6>>
  @max_values 251
  @frames_budget 64 * 1024 * 1024
  @listening_within_ms 30_000
  @served_within_ms 30_000
  @io_idle_ms 60_000

  @spec measure(map()) :: map()
  def measure(%{"params" => p, "options" => options} = request) do
    Options.known!(options, [])
    messages = max(1, div(p["total_bytes"], p["size"]))
    mode = if p["data"] == "list", do: :list, else: :binary
    payloads = payloads(p["size"], messages, mode)
    own = ["elixir", "-pa", "ebin", "-e", "MsgbenchEx.SocketServer.main()"]
    peer = Peer.start("the socket server", Peer.argv(own), request)

    try do
      %{"port" => port} = Peer.next(peer, "listening", @listening_within_ms)
      opts = [mode, packet: 4, active: false, nodelay: true]

      sockets =
        for _ <- 1..p["sockets"] do
          case :gen_tcp.connect(Peer.host(), port, opts, @listening_within_ms) do
            {:ok, socket} -> socket
            {:error, reason} -> Error.internal("cannot connect to the server at port #{port}: #{inspect(reason)}")
          end
        end

      # rate is in the request only when > 0 (the spec's omit_at_default).
      rate = Map.get(p, "rate", 0)
      same? = &same?(&1, &2, p["check_content"] == 1)

      run =
        cond do
          p["mode"] == "flow" -> &flow/3
          rate > 0 -> &SocketOpen.run(&1, &2, &3, p["sockets"] * 1.0e9 / rate, same?)
          true -> &echo(&1, &2, &3, p["check_content"] == 1)
        end

      t0 = Measure.now_ns()

      outs =
        sockets
        |> Enum.map(fn socket ->
          task = Task.async(fn -> run.(socket, payloads, messages) end)
          :ok = :gen_tcp.controlling_process(socket, task.pid)
          task
        end)
        |> Task.await_many(:infinity)

      wall_ns = Measure.now_ns() - t0
      served = Peer.next(peer, "served", @served_within_ms)
      sum = fn key -> outs |> Enum.map(&Map.fetch!(&1, key)) |> Enum.sum() end
      flow? = p["mode"] == "flow"

      result = %{
        measured: %{
          elapsed_ns: Enum.map(outs, & &1.elapsed_ns),
          wall_ns: wall_ns,
          peak_rss_bytes: Measure.peak_rss_bytes()
        },
        verify: %{
          messages_sent: sum.(:sent),
          bytes_sent: sum.(:sent_bytes),
          messages_received: if(flow?, do: served["messages"], else: sum.(:received)),
          bytes_received: if(flow?, do: served["bytes"], else: sum.(:received_bytes)),
          content_mismatches: sum.(:mismatches)
        }
      }

      if rate > 0, do: with_latency(result, outs), else: result
    after
      Peer.stop(peer)
    end
  end

  # The open loop's round trips from their intended send times, all sockets together.
  defp with_latency(result, outs) do
    latency = outs |> Enum.map(& &1.latency) |> Enum.reduce(%Histogram{}, &Histogram.merge/2)

    result
    |> put_in([:measured, :latency_max_ns], latency.max)
    |> Map.put(:histograms, %{latency_ns: Histogram.sparse(latency)})
  end

  # Messages of one value each, the value changing per message (0..250) so a stale echo is caught.
  defp payloads(size, messages, mode) do
    count = Enum.min([messages, @max_values, max(2, div(@frames_budget, size + 4))])
    tuple = for v <- 0..(count - 1), into: [], do: :binary.copy(<<v>>, size)
    tuple = if mode == :list, do: Enum.map(tuple, &:binary.bin_to_list/1), else: tuple
    List.to_tuple(tuple)
  end

  @doc "Message i's payload."
  @spec payload(tuple(), non_neg_integer()) :: binary() | [byte()]
  def payload(payloads, i), do: elem(payloads, rem(i, tuple_size(payloads)))

  defp echo(socket, payloads, messages, check_content?) do
    start = Measure.now_ns()

    mismatches =
      Enum.reduce(0..(messages - 1), 0, fn i, mismatches ->
        sent = payload(payloads, i)
        :ok = send!(socket, sent)

        case :gen_tcp.recv(socket, 0, @io_idle_ms) do
          {:ok, back} -> if same?(back, sent, check_content?), do: mismatches, else: mismatches + 1
          {:error, reason} -> Error.internal("echo #{i + 1} of #{messages}: #{inspect(reason)}")
        end
      end)

    elapsed = Measure.now_ns() - start
    :gen_tcp.close(socket)
    bytes = messages * byte_size_of(payload(payloads, 0))

    %{
      elapsed_ns: elapsed,
      sent: messages,
      sent_bytes: bytes,
      received: messages,
      received_bytes: bytes,
      mismatches: mismatches
    }
  end

  defp same?(back, sent, true), do: back == sent

  defp same?(back, sent, false) when is_binary(back) and is_binary(sent),
    do:
      byte_size(back) == byte_size(sent) and :binary.first(back) == :binary.first(sent) and
        :binary.last(back) == :binary.last(sent)

  defp same?(back, sent, false), do: length(back) == length(sent) and hd(back) == hd(sent)

  @doc "A payload's length in bytes."
  @spec byte_size_of(binary() | [byte()]) :: non_neg_integer()
  def byte_size_of(payload) when is_binary(payload), do: byte_size(payload)
  def byte_size_of(payload), do: length(payload)

  defp flow(socket, payloads, messages) do
    start = Measure.now_ns()
    Enum.each(0..(messages - 1), fn i -> :ok = send!(socket, payload(payloads, i)) end)
    :ok = :gen_tcp.shutdown(socket, :write)

    case :gen_tcp.recv(socket, 0, @io_idle_ms) do
      {:ok, ack} when ack in [@ack, [6]] -> :ok
      other -> Error.internal("waiting for the server's ACK: #{inspect(other)}")
    end

    elapsed = Measure.now_ns() - start
    :gen_tcp.close(socket)
    bytes = messages * byte_size_of(payload(payloads, 0))
    %{elapsed_ns: elapsed, sent: messages, sent_bytes: bytes, received: 0, received_bytes: 0, mismatches: 0}
  end

  defp send!(socket, data) do
    case :gen_tcp.send(socket, data) do
      :ok -> :ok
      {:error, reason} -> Error.internal("send: #{inspect(reason)}")
    end
  end
end

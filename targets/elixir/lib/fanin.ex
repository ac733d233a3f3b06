defmodule MsgbenchEx.Fanin do
  @moduledoc """
  fanin (spec/workloads/fanin.json): N sender Tasks send signals to one receiver
  for T. A signal of size S is a list of S integers: a message, or an exit signal
  whose reason is that list (`Process.exit/2`; the receiver traps exits). Senders
  pick each signal's kind by the mix's percents and look for `:stop` after every
  send (`receive ... after 0`). The receiver is spawned with the variant's
  message_queue_data.
  """
  alias Msgbench.Kit.{Error, Measure, Options}

  @watch_ms 50

  @spec measure(map()) :: map()
  def measure(%{"params" => p, "options" => options}) do
    Options.known!(options, ["message_queue_data"])
    queue = options |> Options.one_of("message_queue_data", ["off_heap", "on_heap"], "on_heap") |> String.to_atom()
    shares = Enum.map(p["mix"], &{&1["percent"], kind(&1["kind"]), Enum.to_list(1..&1["size"])})
    limit = p["memory_limit_mb"] * 1024 * 1024

    receiver = Process.spawn(fn -> receiver() end, [{:message_queue_data, queue}])
    senders = for _ <- 1..p["senders"], do: Task.async(fn -> sender(receiver, shares) end)
    c0 = Measure.cpu_ns()
    Enum.each(senders, &send(&1.pid, :go))
    watch(Measure.now_ns() + p["duration_ms"] * 1_000_000, limit, receiver, senders)
    Enum.each(senders, &send(&1.pid, :stop))
    outcomes = Task.await_many(senders, :infinity)
    sent = Enum.reduce(outcomes, %{message: 0, exit_signal: 0}, &add_counts(&1.sent, &2))
    send(receiver, {:expect, sent.message + sent.exit_signal, self()})

    receive do
      # The receiver answers only if it survived every exit signal.
      {:received, ^receiver, received, last_ns} ->
        c1 = Measure.cpu_ns()
        first_ns = outcomes |> Enum.map(& &1.first_ns) |> Enum.min()
        stop_ns = outcomes |> Enum.map(& &1.stop_ns) |> Enum.max()

        %{
          measured: %{
            send_ns: stop_ns - first_ns,
            receive_ns: last_ns - first_ns,
            drain_ns: max(0, last_ns - stop_ns),
            cpu_ns: c1 - c0,
            peak_rss_bytes: Measure.peak_rss_bytes()
          },
          verify: %{
            sent_message: sent.message,
            sent_exit_signal: sent.exit_signal,
            received_message: received.message,
            received_exit_signal: received.exit_signal,
            receiver_alive: 1
          }
        }
    end
  end

  defp kind("message"), do: :message
  defp kind("exit_signal"), do: :exit_signal

  defp add_counts(a, b), do: Map.merge(a, b, fn _, x, y -> x + y end)

  # Sleeps out T, looking at the VM's memory: a receiver's backlog past the limit ends the run.
  defp watch(deadline_ns, limit, receiver, senders) do
    left_ms = div(deadline_ns - Measure.now_ns(), 1_000_000)

    cond do
      left_ms <= 0 ->
        :ok

      :erlang.memory(:total) > limit ->
        Enum.each(senders, &Task.shutdown(&1, :brutal_kill))
        Process.exit(receiver, :kill)
        Error.resource("the receiver's backlog passed memory_limit_mb = #{div(limit, 1024 * 1024)}")

      true ->
        Process.sleep(min(left_ms, @watch_ms))
        watch(deadline_ns, limit, receiver, senders)
    end
  end

  defp sender(receiver, shares) do
    receive do
      :go -> :ok
    end

    total = shares |> Enum.map(&elem(&1, 0)) |> Enum.sum()
    first_ns = Measure.now_ns()
    sent = send_until_stop(receiver, shares, total, %{message: 0, exit_signal: 0})
    %{sent: sent, first_ns: first_ns, stop_ns: Measure.now_ns()}
  end

  defp send_until_stop(receiver, shares, total, sent) do
    {kind, payload} = pick(shares, :rand.uniform() * total)

    case kind do
      :message -> send(receiver, payload)
      :exit_signal -> Process.exit(receiver, payload)
    end

    sent = Map.update!(sent, kind, &(&1 + 1))

    receive do
      :stop -> sent
    after
      0 -> send_until_stop(receiver, shares, total, sent)
    end
  end

  defp pick([{_, kind, payload}], _roll), do: {kind, payload}
  defp pick([{percent, kind, payload} | _], roll) when roll < percent, do: {kind, payload}
  defp pick([{percent, _, _} | rest], roll), do: pick(rest, roll - percent)

  defp receiver do
    Process.flag(:trap_exit, true)
    receive_loop(%{message: 0, exit_signal: 0}, 0, nil)
  end

  # Counts (and times) every signal until told how many were sent, then until that many arrived.
  defp receive_loop(received, last_ns, expect) do
    if expect != nil and received.message + received.exit_signal == elem(expect, 0) do
      send(elem(expect, 1), {:received, self(), received, last_ns})
    else
      receive do
        {:EXIT, _from, reason} when is_list(reason) ->
          receive_loop(%{received | exit_signal: received.exit_signal + 1}, Measure.now_ns(), expect)

        {:expect, total, from} ->
          receive_loop(received, last_ns, {total, from})

        payload when is_list(payload) ->
          receive_loop(%{received | message: received.message + 1}, Measure.now_ns(), expect)
      end
    end
  end
end

defmodule MsgbenchEx.Ring do
  @moduledoc """
  ring (spec/workloads/ring.json), built as the seed builds it: the root spawns the
  first link, each link spawns the next, the last link's `{:connect, pid}` travels
  back to the root. The token `{laps_left, payload}` then goes round m laps; every
  link counts its own hops into a shared `:counters` when its last lap passes.
  """
  alias Msgbench.Kit.{Measure, Options}

  @hops 1
  @links 2

  @spec measure(map()) :: map()
  def measure(%{"params" => %{"n" => n, "m" => m, "payload" => payload}, "options" => options}) do
    Options.known!(options, [])
    counts = :counters.new(2, [:write_concurrency])
    :counters.add(counts, @links, 1)
    root = self()
    {t0, c0} = {Measure.now_ns(), Measure.cpu_ns()}
    first = spawn(fn -> link(n - 1, root, root, counts) end)

    receive do
      {:connect, ^first} -> :ok
    end

    {t1, c1} = {Measure.now_ns(), Measure.cpu_ns()}
    send(first, {m, payload})
    {hops, laps} = root_loop(first, 0, 0)
    {t2, c2} = {Measure.now_ns(), Measure.cpu_ns()}

    %{
      measured: %{
        create_wall_ns: t1 - t0,
        create_cpu_ns: c1 - c0,
        pass_wall_ns: t2 - t1,
        pass_cpu_ns: c2 - c1,
        peak_rss_bytes: Measure.peak_rss_bytes()
      },
      verify: %{hops: hops + :counters.get(counts, @hops), laps: laps, links: :counters.get(counts, @links)}
    }
  end

  # left: links still to spawn after this one (1: this is the last, its successor the root).
  defp link(left, predecessor, root, counts) do
    :counters.add(counts, @links, 1)

    successor =
      if left == 1 do
        root
      else
        me = self()
        next = spawn(fn -> link(left - 1, me, root, counts) end)

        receive do
          {:connect, ^next} -> next
        end
      end

    send(predecessor, {:connect, self()})
    forward(successor, counts, 0)
  end

  defp forward(successor, counts, hops) do
    receive do
      {1, _payload} = token ->
        # Count before the last lap leaves: the root then sees every hop.
        :counters.add(counts, @hops, hops + 1)
        send(successor, token)

      token ->
        send(successor, token)
        forward(successor, counts, hops + 1)
    end
  end

  defp root_loop(first, hops, laps) do
    receive do
      {1, _payload} ->
        {hops + 1, laps + 1}

      {left, payload} ->
        send(first, {left - 1, payload})
        root_loop(first, hops + 1, laps + 1)
    end
  end
end

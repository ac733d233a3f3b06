defmodule Msgbench.Kit.Sample do
  @moduledoc """
  A worker's time series (spec/message.schema.json, sample lines): a process of its
  own writes `collect.()` about once a second, off the measured path, the first at
  once and the last when stopped.
  """
  alias Msgbench.Kit.{Measure, Protocol}

  @every_ms 1000

  @spec start((() -> map())) :: pid()
  def start(collect) do
    start_ns = Measure.now_ns()
    spawn_link(fn -> loop(collect, start_ns) end)
  end

  @spec stop(pid()) :: :ok
  def stop(sampler) do
    ref = Process.monitor(sampler)
    send(sampler, :stop)

    receive do
      {:DOWN, ^ref, :process, _, _} -> :ok
    end
  end

  defp loop(collect, start_ns) do
    Protocol.line(%{type: "sample", t_ms: div(Measure.now_ns() - start_ns, 1_000_000), values: collect.()})

    receive do
      :stop -> Protocol.line(%{type: "sample", t_ms: div(Measure.now_ns() - start_ns, 1_000_000), values: collect.()})
    after
      @every_ms -> loop(collect, start_ns)
    end
  end

  @doc "The BEAM's own view: RSS, memory by kind, processes."
  @spec beam() :: map()
  def beam do
    memory = for {kind, bytes} <- :erlang.memory(), into: %{}, do: {"#{kind}_bytes", bytes}
    Map.merge(memory, %{"rss_bytes" => Measure.rss_bytes(), "processes_count" => :erlang.system_info(:process_count)})
  end
end

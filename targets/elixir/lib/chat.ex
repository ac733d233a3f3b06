defmodule MsgbenchEx.Chat do
  @moduledoc """
  chat, the in-process kinds (spec/workloads/chat.json): groups and users are
  GenServers under a DynamicSupervisor (groups with the variant's
  message_queue_data), clients are Tasks. A message goes client ->
  its user -> the group -> the peer user (history) -> the peer's client. At T an
  `:atomics` flag stops the sends; the drain waits until the clients' shared
  `:counters` say received == sent, or drain_timeout_s.
  """
  alias Msgbench.Kit.{Histogram, Measure, Options, Sample}
  alias MsgbenchEx.Chat.{Client, Group, User}

  @drain_poll_ms 1

  @spec measure(map()) :: map()
  def measure(%{"params" => p, "options" => options}) do
    Options.known!(options, ["message_queue_data"])
    queue = options |> Options.one_of("message_queue_data", ["off_heap", "on_heap"], "on_heap") |> String.to_atom()
    {:ok, sup} = DynamicSupervisor.start_link(strategy: :one_for_one)
    stop = :atomics.new(1, [])
    counts = Client.counters()
    t0 = Measure.now_ns()

    clients =
      for g <- 0..(p["groups"] - 1), reduce: [] do
        acc ->
          {:ok, group} = DynamicSupervisor.start_child(sup, {Group, {g, queue}})

          Enum.reduce(1..p["clients_per_group"], acc, fn _, acc ->
            [client(sup, group, g, length(acc), p, stop, counts) | acc]
          end)
      end

    setup_ns = Measure.now_ns() - t0
    sampler = Sample.start(&Sample.beam/0)
    window_start = Measure.now_ns()
    Enum.each(clients, &send(&1.pid, :go))
    Process.sleep(round(p["duration_s"] * 1000))
    :atomics.put(stop, 1, 1)
    window_ns = Measure.now_ns() - window_start
    runtime_memory = :erlang.memory(:total)
    drain(counts, Measure.now_ns() + round(p["drain_timeout_s"] * 1.0e9))
    drain_ns = Measure.now_ns() - window_start - window_ns
    Sample.stop(sampler)
    Enum.each(clients, &send(&1.pid, :report))
    reports = Task.await_many(clients, :infinity)
    peak = Measure.peak_rss_bytes()
    DynamicSupervisor.stop(sup)
    sum = fn key -> reports |> Enum.map(&Map.fetch!(&1, key)) |> Enum.sum() end
    latency = Enum.reduce(reports, %Histogram{}, &Histogram.merge(&1.latency, &2))

    %{
      measured: %{
        setup_ns: setup_ns,
        send_window_ns: window_ns,
        drain_ns: drain_ns,
        received_in_window: sum.(:in_window),
        processes_count: p["groups"] * (2 * p["clients_per_group"] + 1),
        peak_rss_bytes: peak,
        runtime_memory_bytes: runtime_memory,
        latency_max_ns: latency.max
      },
      histograms: %{latency_ns: Histogram.sparse(latency)},
      verify: %{
        sent: sum.(:sent),
        received: sum.(:received),
        cross_group: sum.(:cross_group),
        self_deliveries: sum.(:self),
        users: length(reports)
      }
    }
  end

  defp client(sup, group, g, id, p, stop, counts) do
    {:ok, user} = DynamicSupervisor.start_child(sup, {User, {group, p["history"]}})

    setup = %{
      user: user,
      group: g,
      id: id,
      stop: stop,
      counts: counts,
      think_ms: p["think_ms"],
      listener_delay_ms: p["listener_delay_ms"],
      binary?: p["message"] == "binary"
    }

    client = Task.async(fn -> Client.run(setup) end)
    position = Group.join(group, user)
    :ok = User.attach(user, client.pid, position)
    client
  end

  defp drain(counts, deadline_ns) do
    {sent, received} = Client.totals(counts)

    if received < sent and Measure.now_ns() < deadline_ns do
      Process.sleep(@drain_poll_ms)
      drain(counts, deadline_ns)
    end
  end
end

defmodule MsgbenchEx.WorkerTest do
  use ExUnit.Case
  alias Msgbench.Kit.JSON

  # The worker as the harness runs it: a VM of its own, the request on stdin.
  defp run(code, request) do
    path = Path.join(System.tmp_dir!(), "msgbench-ex-#{System.unique_integer([:positive])}.json")
    File.write!(path, JSON.encode(request) <> "\n")

    try do
      {out, 0} = System.cmd("sh", ["-c", "elixir -pa ebin -e \"$0\" < \"$1\"", code, path], stderr_to_stdout: false)
      out |> String.split("\n", trim: true) |> Enum.map(&elem(JSON.decode(&1), 1))
    after
      File.rm(path)
    end
  end

  test "a Task that raises takes the measurement down, and its error is still the error line" do
    code = ~S"""
    Msgbench.Kit.Protocol.serve("t", %{"x" => fn _ ->
      Task.async(fn -> Msgbench.Kit.Error.resource("no ports") end) |> Task.await()
    end})
    """

    assert [%{"type" => "hello"}, %{"type" => "error", "kind" => "resource", "message" => "no ports"}] =
             run(code, %{workload: "x", variant: "v"})
  end

  test "an unknown workload is unsupported, and an unknown option is refused by name" do
    main = "MsgbenchEx.Worker.main()"
    assert [_, %{"kind" => "unsupported"}] = run(main, %{workload: "nope", variant: "default"})

    assert [_, %{"kind" => "internal", "message" => message}] =
             run(main, %{workload: "ring", variant: "default", options: %{bogus: 1}, params: %{n: 3, m: 1, payload: ""}})

    assert message =~ "unknown option bogus"
  end
end

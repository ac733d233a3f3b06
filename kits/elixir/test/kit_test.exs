defmodule Msgbench.Kit.KitTest do
  use ExUnit.Case, async: true
  alias Msgbench.Kit.{Error, Histogram, JSON, Options, Protocol}

  # The vectors every language's bucket function is tested against, read from the
  # harness's test (tests/test_histogram.py) so there is one copy.
  test "the histogram index matches the harness's vectors" do
    text = File.read!(Path.join(__DIR__, "../../../tests/test_histogram.py"))
    [_, list] = Regex.run(~r/VECTORS = \[([^\]]*)\]/, text)
    vectors = Regex.scan(~r/\(([^,]+), (\d+)\)/, list)
    assert length(vectors) >= 10

    for [_, value, bucket] <- vectors do
      value =
        case String.split(String.trim(value), "**") do
          [base, power] -> Integer.pow(String.to_integer(base), String.to_integer(power))
          [v] -> String.to_integer(v)
        end

      assert Histogram.index(value) == String.to_integer(bucket), "value #{value}"
    end

    assert Histogram.index(-5) == 0
  end

  test "a histogram counts, merges and reports sparse pairs by index" do
    a = Enum.reduce([10, 10, 1000], %Histogram{}, &Histogram.record(&2, &1))
    b = Histogram.record(%Histogram{}, 1000)
    merged = Histogram.merge(a, b)
    assert Histogram.sparse(merged) == [[10, 2], [317, 2]]
    assert merged.max == 1000 and merged.count == 4
  end

  test "JSON round-trips the protocol's values and refuses what is not JSON" do
    assert {:ok, %{"a" => [1, 2.5, -300.0, "xé", true, nil], "b" => %{}}} =
             JSON.decode(~s({"a": [1, 2.5, -3e2, "x\\u00e9", true, null], "b": {}}))

    text = JSON.encode(%{type: "hello", s: "q\"\n\u2014", l: [1, [2]]})
    assert {:ok, %{"type" => "hello", "s" => "q\"\n\u2014", "l" => [1, [2]]}} = JSON.decode(text)
    assert {:error, _} = JSON.decode("{oops")
    assert {:error, _} = JSON.decode("[1] 2")
  end

  test "options: an unknown key is an internal error naming it; typed readers check values" do
    assert_raise Error, ~r/unknown option b \(known here: a\)/, fn -> Options.known!(%{"a" => 1, "b" => 2}, ["a"]) end
    assert Options.known!(%{}, []) == :ok
    assert Options.one_of(%{"q" => "x"}, "q", ["x", "y"], "y") == "x"
    assert_raise Error, ~r/q = "z": expected one of x, y/, fn -> Options.one_of(%{"q" => "z"}, "q", ["x", "y"], "y") end
  end

  test "a request that is not JSON, or has no workload, is internal" do
    assert %{"workload" => "ring", "options" => %{}} = Protocol.parse_request(~s({"workload": "ring"}))
    assert_raise Error, ~r/not JSON/, fn -> Protocol.parse_request("{oops") end
    assert_raise Error, ~r/no workload/, fn -> Protocol.parse_request("{}") end
    assert %{kind: :resource} = Protocol.error_line(Error.new(:resource, "full"), [])
    assert %{kind: "internal"} = Protocol.error_line(%RuntimeError{message: "bug"}, [])
  end
end

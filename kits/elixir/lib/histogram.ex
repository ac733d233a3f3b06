defmodule Msgbench.Kit.Histogram do
  @moduledoc """
  Latency histograms in the harness's layout (msgbench/histogram.py): exact below
  128, then 64 buckets per power of two. A histogram is a map of bucket index to
  count plus the exact maximum; the harness alone computes percentiles.
  """
  import Bitwise

  defstruct counts: %{}, max: 0, count: 0

  @type t :: %__MODULE__{
          counts: %{non_neg_integer() => pos_integer()},
          max: non_neg_integer(),
          count: non_neg_integer()
        }

  @doc "v itself below 128, else shift * 64 + (v >>> shift) with shift = bit length - 7; negative is 0."
  @spec index(integer()) :: non_neg_integer()
  def index(v) when v < 128, do: max(v, 0)

  def index(v) do
    shift = bit_length(v) - 7
    shift * 64 + (v >>> shift)
  end

  # The number of bits of v >= 1, by halving steps: no list of digits per sample (record/2
  # runs once per delivery or echo, inside a worker's timed loop).
  defp bit_length(v) when v >= 1 <<< 32, do: 32 + bit_length(v >>> 32)
  defp bit_length(v) when v >= 1 <<< 16, do: 16 + bit_length(v >>> 16)
  defp bit_length(v) when v >= 1 <<< 8, do: 8 + bit_length(v >>> 8)
  defp bit_length(v) when v >= 1 <<< 4, do: 4 + bit_length(v >>> 4)
  defp bit_length(v) when v >= 1 <<< 2, do: 2 + bit_length(v >>> 2)
  defp bit_length(v) when v >= 2, do: 2
  defp bit_length(_), do: 1

  @spec record(t(), integer()) :: t()
  def record(%__MODULE__{} = h, v) do
    v = max(v, 0)
    %{h | counts: Map.update(h.counts, index(v), 1, &(&1 + 1)), max: max(h.max, v), count: h.count + 1}
  end

  @spec merge(t(), t()) :: t()
  def merge(a, b) do
    %__MODULE__{
      counts: Map.merge(a.counts, b.counts, fn _, x, y -> x + y end),
      max: max(a.max, b.max),
      count: a.count + b.count
    }
  end

  @doc "The protocol's form: sparse [index, count] pairs by index."
  @spec sparse(t()) :: [[non_neg_integer()]]
  def sparse(h), do: h.counts |> Enum.sort() |> Enum.map(fn {i, n} -> [i, n] end)
end

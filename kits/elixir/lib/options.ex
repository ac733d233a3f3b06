defmodule Msgbench.Kit.Options do
  @moduledoc """
  The variant's options (target.toml's `options`, sent in every request): typed
  readers, and `known!/2`, which refuses a key the worker does not know, since a
  silently ignored option would measure something else.
  """
  alias Msgbench.Kit.Error

  @spec known!(map(), [String.t()]) :: :ok
  def known!(options, known) do
    case options |> Map.keys() |> Enum.reject(&(&1 in known)) |> Enum.sort() do
      [] -> :ok
      unknown -> Error.internal("unknown option #{Enum.join(unknown, ", ")} (known here: #{known_names(known)})")
    end
  end

  defp known_names([]), do: "none"
  defp known_names(known), do: Enum.join(known, ", ")

  @spec one_of(map(), String.t(), [term()], term()) :: term()
  def one_of(options, name, accepted, default) do
    case Map.fetch(options, name) do
      :error -> default
      {:ok, value} -> if value in accepted, do: value, else: bad(name, value, "one of #{Enum.join(accepted, ", ")}")
    end
  end

  @spec boolean(map(), String.t(), boolean()) :: boolean()
  def boolean(options, name, default) do
    case Map.fetch(options, name) do
      :error -> default
      {:ok, value} when is_boolean(value) -> value
      {:ok, value} -> bad(name, value, "true or false")
    end
  end

  defp bad(name, value, accepted), do: Error.internal("option #{name} = #{inspect(value)}: expected #{accepted}")
end

defmodule Msgbench.Kit.Error do
  @moduledoc """
  A failure the worker reports as an error line (spec/README.md): `kind` is
  `:unsupported`, `:resource` or `:internal`. Raise it anywhere in a run.
  """
  defexception [:kind, :message]

  @kinds [:unsupported, :resource, :internal]

  @spec new(atom(), String.t()) :: Exception.t()
  def new(kind, message) when kind in @kinds, do: %__MODULE__{kind: kind, message: message}

  @spec unsupported(String.t()) :: no_return()
  def unsupported(message), do: raise(new(:unsupported, message))
  @spec resource(String.t()) :: no_return()
  def resource(message), do: raise(new(:resource, message))
  @spec internal(String.t()) :: no_return()
  def internal(message), do: raise(new(:internal, message))
end

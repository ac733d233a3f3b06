defmodule Msgbench.Kit.JSON do
  @moduledoc """
  JSON for the worker protocol. OTP 25 has no JSON module and no Hex package is
  reachable here, so the kit carries its own: objects decode to maps with string
  keys, and encode from maps with atom or string keys, lists, numbers, strings,
  booleans and nil.
  """

  @spec encode(term()) :: String.t()
  def encode(value), do: IO.iodata_to_binary(encode_iodata(value))

  defp encode_iodata(nil), do: "null"
  defp encode_iodata(true), do: "true"
  defp encode_iodata(false), do: "false"
  defp encode_iodata(n) when is_integer(n), do: Integer.to_string(n)
  defp encode_iodata(n) when is_float(n), do: :erlang.float_to_binary(n, [:short])
  defp encode_iodata(a) when is_atom(a), do: encode_string(Atom.to_string(a))
  defp encode_iodata(s) when is_binary(s), do: encode_string(s)
  defp encode_iodata(list) when is_list(list), do: ["[", Enum.map_intersperse(list, ",", &encode_iodata/1), "]"]
  defp encode_iodata(tuple) when is_tuple(tuple), do: encode_iodata(Tuple.to_list(tuple))

  defp encode_iodata(map) when is_map(map) do
    pairs = Enum.map_intersperse(map, ",", fn {k, v} -> [encode_string(to_string(k)), ":", encode_iodata(v)] end)
    ["{", pairs, "}"]
  end

  defp encode_string(s), do: [?", escape(s), ?"]

  defp escape(s) do
    for <<c::utf8 <- s>>, into: "" do
      case c do
        ?" -> "\\\""
        ?\\ -> "\\\\"
        ?\n -> "\\n"
        ?\r -> "\\r"
        ?\t -> "\\t"
        c when c < 0x20 -> "\\u" <> String.pad_leading(Integer.to_string(c, 16), 4, "0")
        c -> <<c::utf8>>
      end
    end
  end

  @doc "Decodes one JSON value; `{:error, reason}` for text that is not JSON."
  @spec decode(binary()) :: {:ok, term()} | {:error, String.t()}
  def decode(text) do
    case value(skip(text)) do
      {value, rest} ->
        if skip(rest) == "", do: {:ok, value}, else: {:error, "text after the value: #{String.slice(rest, 0, 40)}"}
    end
  catch
    {:json, reason} -> {:error, reason}
  end

  defp skip(<<c, rest::binary>>) when c in [?\s, ?\t, ?\n, ?\r], do: skip(rest)
  defp skip(rest), do: rest

  defp value("{" <> rest), do: object(skip(rest), %{})
  defp value("[" <> rest), do: array(skip(rest), [])
  defp value("\"" <> rest), do: string(rest, [])
  defp value("true" <> rest), do: {true, rest}
  defp value("false" <> rest), do: {false, rest}
  defp value("null" <> rest), do: {nil, rest}
  defp value(<<c, _::binary>> = text) when c == ?- or c in ?0..?9, do: number(text)
  defp value(text), do: throw({:json, "unexpected #{inspect(String.slice(text, 0, 20))}"})

  defp object("}" <> rest, acc), do: {acc, rest}

  defp object("\"" <> rest, acc) do
    {key, rest} = string(rest, [])
    ":" <> rest = expect(skip(rest), ":")
    {v, rest} = value(skip(rest))
    acc = Map.put(acc, key, v)

    case skip(rest) do
      "," <> rest -> object(skip(rest), acc)
      "}" <> rest -> {acc, rest}
      other -> throw({:json, "expected , or } at #{inspect(String.slice(other, 0, 20))}"})
    end
  end

  defp object(other, _), do: throw({:json, "expected a key at #{inspect(String.slice(other, 0, 20))}"})

  defp array("]" <> rest, []), do: {[], rest}

  defp array(text, acc) do
    {v, rest} = value(text)

    case skip(rest) do
      "," <> rest -> array(skip(rest), [v | acc])
      "]" <> rest -> {Enum.reverse([v | acc]), rest}
      other -> throw({:json, "expected , or ] at #{inspect(String.slice(other, 0, 20))}"})
    end
  end

  defp expect(text, prefix) do
    if String.starts_with?(text, prefix), do: text, else: throw({:json, "expected #{prefix}"})
  end

  defp string("\"" <> rest, acc), do: {IO.iodata_to_binary(Enum.reverse(acc)), rest}
  defp string("\\u" <> <<hex::binary-size(4), rest::binary>>, acc), do: unicode(String.to_integer(hex, 16), rest, acc)
  defp string("\\" <> <<c, rest::binary>>, acc), do: string(rest, [unescape(c) | acc])
  defp string(<<c::utf8, rest::binary>>, acc), do: string(rest, [<<c::utf8>> | acc])
  defp string(_, _), do: throw({:json, "an unterminated string"})

  # A surrogate pair is one code point.
  defp unicode(high, "\\u" <> <<hex::binary-size(4), rest::binary>>, acc) when high in 0xD800..0xDBFF do
    low = String.to_integer(hex, 16)
    string(rest, [<<0x10000 + (high - 0xD800) * 0x400 + (low - 0xDC00)::utf8>> | acc])
  end

  defp unicode(code, rest, acc), do: string(rest, [<<code::utf8>> | acc])

  defp unescape(?n), do: "\n"
  defp unescape(?t), do: "\t"
  defp unescape(?r), do: "\r"
  defp unescape(?b), do: "\b"
  defp unescape(?f), do: "\f"
  defp unescape(c) when c in [?", ?\\, ?/], do: <<c>>
  defp unescape(c), do: throw({:json, "an unknown escape \\#{<<c>>}"})

  defp number(text) do
    {digits, rest} = take_number(text, [])
    literal = IO.iodata_to_binary(digits)

    parsed =
      if String.contains?(literal, [".", "e", "E"]) do
        # Erlang's float parser wants a digit on each side of the point.
        literal |> String.replace(~r/^(-?\d+)([eE])/, "\\1.0\\2") |> String.to_float()
      else
        String.to_integer(literal)
      end

    {parsed, rest}
  rescue
    ArgumentError -> throw({:json, "a malformed number"})
  end

  defp take_number(<<c, rest::binary>>, acc) when c in ?0..?9 or c in [?-, ?+, ?., ?e, ?E],
    do: take_number(rest, [acc, c])

  defp take_number(rest, acc), do: {acc, rest}
end

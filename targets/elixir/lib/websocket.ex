defmodule MsgbenchEx.WebSocket do
  @moduledoc """
  The server side of RFC 6455 over `:gen_tcp`, as much as the chat server kind needs:
  the opening handshake, and frames (masked from the client, unmasked back). OTP has
  no WebSocket server (inets' httpd has no upgrade, and cowboy is a Hex package, not
  reachable here), so these ~80 lines are the chat server's own.
  """
  import Bitwise

  @guid "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
  @max_header 16 * 1024

  @doc "Reads the HTTP upgrade request on a passive socket and answers 101; `{:ok, leftover}`."
  @spec handshake(:gen_tcp.socket()) :: {:ok, binary()} | {:error, term()}
  def handshake(socket), do: read_request(socket, "")

  defp read_request(socket, buffer) do
    case :binary.split(buffer, "\r\n\r\n") do
      [head, rest] ->
        case Regex.run(~r/^sec-websocket-key:\s*(\S+)\s*$/mi, head) do
          [_, key] ->
            accept = Base.encode64(:crypto.hash(:sha, key <> @guid))

            response =
              "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" <>
                "Sec-WebSocket-Accept: #{accept}\r\n\r\n"

            with :ok <- :gen_tcp.send(socket, response), do: {:ok, rest}

          nil ->
            _ = :gen_tcp.send(socket, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            {:error, :no_websocket_key}
        end

      [_] when byte_size(buffer) > @max_header ->
        {:error, :header_too_large}

      [_] ->
        with {:ok, data} <- :gen_tcp.recv(socket, 0, 30_000), do: read_request(socket, buffer <> data)
    end
  end

  @typedoc "A whole message: its opcode and unmasked payload (fragments joined)."
  @type frame :: {:text | :binary | :close | :ping | :pong, binary()}

  @typedoc "A message whose first fragments have come (RFC 6455 5.4), or nil."
  @type partial :: nil | {:text | :binary, [binary()]}

  @doc """
  Takes the whole messages at the front of buffer: `{messages, rest, partial}`. A
  fragmented message (a first frame without FIN, then continuation frames) comes out
  whole once its last fragment has; control frames may come between its fragments.
  """
  @spec parse(binary(), partial(), [frame()]) :: {[frame()], binary(), partial()}
  def parse(buffer, partial \\ nil, acc \\ []) do
    case frame(buffer) do
      {{fin, kind, payload}, rest} ->
        case assemble(fin, kind, payload, partial) do
          {:message, message, partial} -> parse(rest, partial, [message | acc])
          {:partial, partial} -> parse(rest, partial, acc)
        end

      :more ->
        {Enum.reverse(acc), buffer, partial}
    end
  end

  defp assemble(_fin, kind, payload, partial) when kind in [:close, :ping, :pong],
    do: {:message, {kind, payload}, partial}

  defp assemble(1, kind, payload, nil) when kind in [:text, :binary], do: {:message, {kind, payload}, nil}
  defp assemble(0, kind, payload, nil) when kind in [:text, :binary], do: {:partial, {kind, [payload]}}

  defp assemble(1, :continuation, payload, {kind, parts}),
    do: {:message, {kind, IO.iodata_to_binary(Enum.reverse([payload | parts]))}, nil}

  defp assemble(0, :continuation, payload, {kind, parts}), do: {:partial, {kind, [payload | parts]}}
  # A continuation with nothing to continue, or a new message inside one: a protocol error.
  defp assemble(_fin, _kind, _payload, _partial), do: {:message, {:close, ""}, nil}

  defp frame(<<fin::1, _rsv::3, op::4, masked::1, 127::7, len::64, rest::binary>>),
    do: body(fin, op, masked, len, rest)

  defp frame(<<fin::1, _rsv::3, op::4, masked::1, 126::7, len::16, rest::binary>>),
    do: body(fin, op, masked, len, rest)

  defp frame(<<fin::1, _rsv::3, op::4, masked::1, len::7, rest::binary>>) when len < 126,
    do: body(fin, op, masked, len, rest)

  defp frame(_), do: :more

  defp body(fin, op, masked, len, data) do
    case {masked, data} do
      {1, <<key::binary-size(4), payload::binary-size(len), rest::binary>>} ->
        {{fin, opcode(op), unmask(payload, key)}, rest}

      {0, <<payload::binary-size(len), rest::binary>>} ->
        {{fin, opcode(op), payload}, rest}

      _ ->
        :more
    end
  end

  defp opcode(0), do: :continuation
  defp opcode(1), do: :text
  defp opcode(2), do: :binary
  defp opcode(8), do: :close
  defp opcode(9), do: :ping
  defp opcode(10), do: :pong
  defp opcode(_), do: :close

  # XOR with the key repeated: one :crypto.exor over the whole payload.
  defp unmask(payload, key) do
    size = byte_size(payload)
    <<stream::binary-size(size), _::binary>> = :binary.copy(key, div(size, 4) + 1)
    :crypto.exor(payload, stream)
  end

  @doc "An unmasked server frame (FIN set) as iodata."
  @spec encode(:text | :binary | :close | :pong, iodata()) :: iodata()
  def encode(kind, payload) do
    len = IO.iodata_length(payload)
    op = %{text: 1, binary: 2, close: 8, pong: 10}[kind]

    header =
      cond do
        len < 126 -> <<1::1, 0::3, op::4, 0::1, len::7>>
        len < 1 <<< 16 -> <<1::1, 0::3, op::4, 0::1, 126::7, len::16>>
        true -> <<1::1, 0::3, op::4, 0::1, 127::7, len::64>>
      end

    [header, payload]
  end
end

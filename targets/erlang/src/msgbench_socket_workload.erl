%% The socket workload (spec/workloads/socket.json): from the request's
%% params and options to a run of msgbench_socket against its server half,
%% and the raw facts and verify counts the spec names. The same request
%% configures the server (msgbench_socket_server, started through
%% msgbench_worker:serve/0).
-module(msgbench_socket_workload).

-export([configure/2, measure/1, serve/3]).

-type config() :: #{run := msgbench_socket:run(),
                    remote := boolean(),
                    port := inet:port_number(),
                    request := msgbench_worker:request()}.

%% Limits on the waits for the server's lines and its exit (ms).
-define(LISTENING_MS, 30000).
-define(SERVED_MS, 30000).
-define(EXIT_MS, 10000).
%% A client that lost a connection waits this long for the server's own
%% error line, which says more than a reset does.
-define(EXPLAIN_MS, 2000).

-spec configure(msgbench_worker:request(), msgbench_erlang_options:options()) ->
          {ok, config()} | {error, msgbench_worker:error_kind(), iodata()}.
configure(#{<<"params">> := #{<<"mode">> := Mode, <<"size">> := Size,
                              <<"total_bytes">> := TotalBytes, <<"sockets">> := Sockets,
                              <<"data">> := Data, <<"placement">> := Placement,
                              <<"check_content">> := CheckContent, <<"port">> := Port}} = Request,
          #{active := Active}) ->
    %% rate is in the request only when > 0 (the spec's omit_at_default).
    Rate = maps:get(<<"rate">>, maps:get(<<"params">>, Request), 0),
    Run = #{mode => binary_to_existing_atom(Mode),
            size => Size,
            messages => TotalBytes div Size,
            sockets => Sockets,
            data => binary_to_existing_atom(Data),
            check_content => CheckContent =:= 1,
            active => Active,
            rate => Rate},
    {ok, #{run => Run, remote => Placement =:= <<"remote">>, port => Port, request => Request}}.

%% The client's side: the server started, the sequence run, the server's
%% count read.
-spec measure(config()) -> {ok, #{measured := map(), verify := map(), histograms => map()}}
                               | {error, msgbench_worker:error_kind(), iodata()}.
measure(#{run := #{sockets := Sockets} = Run, remote := Remote} = Config) ->
    Checks = [fun() -> msgbench_limits:process_headroom(io_lib:format("sockets = ~w", [Sockets]),
                                                        Sockets + 1) end,
              fun() -> msgbench_socket:memory_fits(client, Run) end,
              fun() -> msgbench_socket_peer:config(Remote) end],
    case first_error(Checks) of
        {ok, PeerConfig} ->
            case with_peer(PeerConfig, Config) of
                {ok, Outcome, Served} ->
                    {ok, latency(Outcome, #{measured => measured(Outcome),
                                            verify => verify(Run, Outcome, Served)})};
                {error, _Kind, _Message} = Error ->
                    Error
            end;
        {error, _Kind, _Message} = Error ->
            Error
    end.

first_error([Check]) ->
    Check();
first_error([Check | Rest]) ->
    case Check() of
        ok -> first_error(Rest);
        Error -> Error
    end.

%% The server reads the worker's own request.
with_peer(#{host := Host} = PeerConfig, #{run := Run, request := Request}) ->
    case msgbench_socket_peer:start(PeerConfig, [msgbench_json:encode(Request), $\n]) of
        {ok, Peer} ->
            try
                case msgbench_socket_peer:next(Peer, <<"listening">>, ?LISTENING_MS) of
                    {ok, #{<<"port">> := Port}} when is_integer(Port), Port > 0, Port =< 65535 ->
                        sequence(Peer, Run, Host, Port);
                    {ok, Line} ->
                        {error, internal, ["the server's listening line has no port: ",
                                           msgbench_json:encode(Line)]};
                    {error, _Kind, _Message} = Error ->
                        Error
                end
            after
                msgbench_socket_peer:stop(Peer)
            end;
        {error, _Kind, _Message} = Error ->
            Error
    end.

sequence(Peer, Run, Host, Port) ->
    case msgbench_socket:run(Run, Host, Port) of
        {ok, Outcome} ->
            case msgbench_socket_peer:next(Peer, <<"served">>, ?SERVED_MS) of
                {ok, #{<<"messages">> := Messages, <<"bytes">> := Bytes}}
                  when is_integer(Messages), is_integer(Bytes) ->
                    case msgbench_socket_peer:finish(Peer, ?EXIT_MS) of
                        ok -> {ok, Outcome, #{messages => Messages, bytes => Bytes}};
                        Error -> Error
                    end;
                {ok, Line} ->
                    {error, internal, ["the server's served line lacks its counts: ",
                                       msgbench_json:encode(Line)]};
                {error, _Kind, _Message} = Error ->
                    Error
            end;
        {error, true, Kind, Message} ->
            case msgbench_socket_peer:explanation(Peer, ?EXPLAIN_MS) of
                none -> {error, Kind, Message};
                Explained -> Explained
            end;
        {error, false, Kind, Message} ->
            {error, Kind, Message}
    end.

%% elapsed_ns: one per socket, its whole sequence; wall_ns: from the
%% release of every client to the last one done (flow: its ack, the
%% receiver has every byte). The harness takes the means and rates.
measured(#{elapsed := Elapsed, wall := Wall}) ->
    #{elapsed_ns => Elapsed, wall_ns => Wall, peak_rss_bytes => msgbench_measure:peak_rss_bytes()}.

%% Open loop: each round trip from its intended send time, all sockets
%% together, and the largest.
latency(#{latency := Latency, latency_max := Max}, #{measured := Measured} = Result) ->
    Result#{measured := Measured#{latency_max_ns => Max}, histograms => #{latency_ns => Latency}};
latency(_Outcome, Result) ->
    Result.

%% echo: the echoes back at the clients; flow: what the server took.
received(echo, #{received := Received, received_bytes := Bytes}, _Served) -> {Received, Bytes};
received(flow, _Outcome, #{messages := Received, bytes := Bytes}) -> {Received, Bytes}.

verify(#{mode := Mode}, #{sent := Sent, sent_bytes := SentBytes, mismatches := Mismatches} = Outcome,
       Served) ->
    {Received, ReceivedBytes} = received(Mode, Outcome, Served),
    #{messages_sent => Sent, bytes_sent => SentBytes,
      messages_received => Received, bytes_received => ReceivedBytes,
      content_mismatches => Mismatches}.

%% The server half of the same request: serves and prints its lines.
-spec serve(config(), fun((map()) -> ok), fun(() -> term())) ->
          ok | {error, msgbench_worker:error_kind(), iodata()}.
serve(#{run := Run, port := Port}, Emit, WatchStdin) ->
    msgbench_socket_server:serve(Run, Port, Emit, WatchStdin).

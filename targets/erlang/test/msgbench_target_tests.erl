%% target.toml against the worker: the variants agree, and the run command
%% it gives the harness starts a worker that speaks the protocol and prints
%% nothing else on stdout.
-module(msgbench_target_tests).

-include_lib("eunit/include/eunit.hrl").

%% The test runs in targets/erlang (make test), where the harness runs workers.
-define(TARGET_TOML, "target.toml").

%%--------------------------------------------------------------------
%% target.toml, read with just enough TOML for this file: tables, and
%% key = value where the value is also valid JSON (strings, arrays, {}) or
%% an inline table of such values ({ chat = 4700 }).
%%--------------------------------------------------------------------

toml() ->
    {ok, Text} = file:read_file(?TARGET_TOML),
    Lines = [string:trim(Line) || Line <- string:split(Text, "\n", all)],
    parse(Lines, [], #{}).

parse([], _Table, Acc) ->
    Acc;
parse([<<>> | Rest], Table, Acc) ->
    parse(Rest, Table, Acc);
parse([<<"#", _/binary>> | Rest], Table, Acc) ->
    parse(Rest, Table, Acc);
parse([<<"[", _/binary>> = Header | Rest], _Table, Acc) ->
    Name = string:trim(Header, both, "[]"),
    parse(Rest, string:split(Name, ".", all), Acc);
parse([Line | Rest], Table, Acc) ->
    [Key, Value0] = string:split(Line, "="),
    %% An array may go on over several lines.
    {Value, After} = complete_value(inline_table(string:trim(Value0)), Rest),
    {ok, Decoded} = msgbench_json:decode(Value),
    parse(After, Table, put_in(Table ++ [string:trim(Key)], Decoded, Acc)).

%% { key = value, ... } as the JSON object {"key": value, ...}.
inline_table(<<"{", _/binary>> = Value) ->
    re:replace(Value, "([A-Za-z0-9_]+)\\s*=", "\"\\1\":", [global, {return, binary}]);
inline_table(Value) ->
    Value.

complete_value(Value, Rest) ->
    case msgbench_json:decode(Value) of
        {ok, _} -> {Value, Rest};
        {error, _} -> [Next | More] = Rest, complete_value(<<Value/binary, Next/binary>>, More)
    end.

put_in([Key], Value, Map) -> Map#{Key => Value};
put_in([Key | Path], Value, Map) -> Map#{Key => put_in(Path, Value, maps:get(Key, Map, #{}))}.

%%--------------------------------------------------------------------

variants_agree_with_the_worker_test() ->
    #{<<"variants">> := Variants, <<"default_variant">> := Default} = toml(),
    ?assertEqual(msgbench_variants:names(), lists:sort(maps:keys(Variants))),
    ?assert(maps:is_key(Default, Variants)),
    [begin
         {ok, #{workloads := Workloads, message_queue_data := QueueData, schedulers := Schedulers}} =
             msgbench_variants:lookup(Name),
         ?assertEqual({Name, Workloads}, {Name, maps:get(<<"workloads">>, Table)}),
         %% options.message_queue_data where a receiver is spawned with it:
         %% fanin and chat; socket-only variants have none.
         case maps:find(<<"options">>, Table) of
             {ok, #{<<"message_queue_data">> := Option}} ->
                 ?assertEqual({Name, atom_to_binary(QueueData)}, {Name, Option});
             error ->
                 ?assertEqual({Name, []}, {Name, [W || W <- Workloads, W =:= <<"fanin">> orelse W =:= <<"chat">>]})
         end,
         Args = maps:get(<<"args">>, Table),
         case Schedulers of
             any -> ?assertNot(lists:member(<<"+S">>, Args));
             _ -> ?assertEqual({Name, [<<"+S">>, integer_to_binary(Schedulers)]}, {Name, Args})
         end,
         ?assert(lists:member(maps:get(<<"label">>, Table), [<<"idiomatic">>, <<"tuned">>]))
     end || {Name, Table} <- maps:to_list(Variants)].

%% The server half runs with the worker's flags, entry point serve.
serve_command_test() ->
    #{<<"run">> := Run, <<"serve">> := Serve} = toml(),
    ?assertEqual(lists:droplast(Run), lists:droplast(Serve)),
    ?assertEqual(<<"main">>, lists:last(Run)),
    ?assertEqual(<<"serve">>, lists:last(Serve)).

toml_basics_test() ->
    Toml = toml(),
    ?assertMatch(#{<<"name">> := <<"erlang">>, <<"kind">> := <<"runtime">>,
                   <<"language">> := <<"erlang">>, <<"max_processes">> := 134217727}, Toml),
    ?assert(maps:get(<<"per_process_bytes">>, Toml) > 0),
    %% A chat user is two processes, its history and its client's
    %% histogram: more per process than the ring's links.
    #{<<"per_process_bytes_for">> := #{<<"chat">> := Chat}} = Toml,
    ?assert(Chat > maps:get(<<"per_process_bytes">>, Toml)).

%%--------------------------------------------------------------------
%% The real worker, started the way the harness starts it.
%%--------------------------------------------------------------------

%% The run (or serve) argv with its placeholders filled in.
command(Variant) ->
    command(Variant, <<"run">>).

command(Variant, Which) ->
    #{Which := Run, <<"variants">> := #{Variant := #{<<"args">> := Args}}} = toml(),
    lists:append([case Arg of
                      <<"{variant_args}">> -> Args;
                      _ -> [binary:replace(Arg, <<"{process_limit}">>, <<"4096">>)]
                  end || Arg <- Run]).

%% Every stdout line of one worker, and its exit status. stderr (the
%% worker's log) is dropped by the shell.
run_worker(Variant, Request) ->
    [Program | Args] = command(Variant),
    %% A socket worker starts its server half from target.toml's serve, as
    %% the harness tells it.
    {ok, Cwd} = file:get_cwd(),
    Serve = msgbench_json:encode(command(Variant, <<"serve">>)),
    Env = [{"MSGBENCH_PEER_COMMAND", binary_to_list(iolist_to_binary(Serve))},
           {"MSGBENCH_PEER_CWD", Cwd}, {"MSGBENCH_PEER_HOST", "127.0.0.1"}],
    Port = open_port({spawn_executable, "/bin/sh"},
                     [{args, ["-c", "exec \"$0\" \"$@\" 2>/dev/null", os:find_executable(binary_to_list(Program)) | Args]},
                      {env, Env}, binary, exit_status, use_stdio, {line, 1 bsl 20}]),
    true = port_command(Port, [msgbench_json:encode(Request), $\n]),
    read_port(Port, []).

read_port(Port, Lines) ->
    receive
        {Port, {data, {eol, Line}}} -> read_port(Port, [Line | Lines]);
        {Port, {data, {noeol, Line}}} -> read_port(Port, [Line | Lines]);
        {Port, {exit_status, Status}} -> {Status, lists:reverse(Lines)}
    after 20000 ->
        port_close(Port),
        error(worker_timeout)
    end.

protocol_lines(Variant, Request) ->
    {Status, Lines} = run_worker(Variant, Request),
    ?assertEqual(0, Status),
    Decoded = [case msgbench_json:decode(Line) of
                   {ok, #{<<"type">> := _} = Message} -> Message;
                   Other -> error({not_a_protocol_line, Line, Other})
               end || Line <- Lines],
    [Hello | Rest] = Decoded,
    ?assertMatch(#{<<"type">> := <<"hello">>, <<"target">> := <<"erlang">>, <<"variant">> := Variant},
                 Hello),
    [Final] = [Line || #{<<"type">> := Type} = Line <- Rest, Type =/= <<"progress">>],
    ?assertEqual(Final, lists:last(Rest)),
    Final.

worker_test_() ->
    {timeout, 60,
     [fun() ->
              Final = protocol_lines(<<"default">>,
                                     #{workload => ring, variant => default, repetition => 1,
                                       params => #{n => 1000, m => 10, payload => <<"BOO!">>}}),
              ?assertMatch(#{<<"type">> := <<"result">>,
                             <<"verify">> := #{<<"hops">> := 10000, <<"laps">> := 10,
                                               <<"links">> := 1000}}, Final)
      end,
      fun() ->
              Final = protocol_lines(<<"single_scheduler">>,
                                     #{workload => ring, variant => single_scheduler, repetition => 1,
                                       params => #{n => 100, m => 2, payload => <<"h", 16#e9/utf8>>}}),
              ?assertMatch(#{<<"type">> := <<"result">>, <<"verify">> := #{<<"hops">> := 200}}, Final)
      end,
      fun() ->
              Final = protocol_lines(<<"on_heap">>,
                                     #{workload => fanin, variant => on_heap, repetition => 1,
                                       params => #{senders => 2, duration_ms => 50, method => msgbench,
                                                   memory_limit_mb => 8192,
                                                   mix => [#{percent => 100, kind => message,
                                                             size => 1}]}}),
              ?assertMatch(#{<<"type">> := <<"result">>, <<"verify">> := #{<<"receiver_alive">> := 1}},
                           Final)
      end,
      fun() ->
              %% The longest payload, in characters that take two bytes in
              %% UTF-8: stdin is read whole and decoded as UTF-8.
              Payload = binary:copy(<<16#e9/utf8>>, 65536),
              Final = protocol_lines(<<"default">>,
                                     #{workload => ring, variant => default, repetition => 1,
                                       params => #{n => 10, m => 2, payload => Payload}}),
              ?assertMatch(#{<<"type">> := <<"result">>, <<"verify">> := #{<<"hops">> := 20}}, Final),
              TooLong = protocol_lines(<<"default">>,
                                       #{workload => ring, variant => default, repetition => 1,
                                         params => #{n => 10, m => 2,
                                                     payload => <<Payload/binary, "x">>}}),
              ?assertMatch(#{<<"type">> := <<"error">>, <<"kind">> := <<"bad_params">>}, TooLong)
      end,
      fun() ->
              %% The seed's sentence travels (as a literal) through a real
              %% VM; every variant that declares chat runs it.
              [?assertMatch(#{<<"type">> := <<"result">>,
                              <<"verify">> := #{<<"users">> := 6, <<"cross_group">> := 0}},
                            protocol_lines(Variant,
                                           #{workload => chat, variant => Variant, repetition => 1,
                                             params => #{groups => 2, clients_per_group => 3,
                                                         duration_s => 0.1, drain_timeout_s => 5}}))
               || Variant <- [<<"default">>, <<"on_heap">>, <<"yield">>]]
      end,
      fun() ->
              Final = protocol_lines(<<"default">>,
                                     #{workload => ring, variant => default, repetition => 1,
                                       params => #{n => 0}}),
              ?assertMatch(#{<<"type">> := <<"error">>, <<"kind">> := <<"bad_params">>}, Final)
      end,
      fun() ->
              %% A +P too small for the ring: the worker says so, and nothing
              %% (no "Too many processes" report) reaches stdout.
              Final = protocol_lines(<<"default">>,
                                     #{workload => ring, variant => default, repetition => 1,
                                       params => #{n => 5000, m => 1}}),
              ?assertMatch(#{<<"type">> := <<"error">>, <<"kind">> := <<"resource">>}, Final)
      end,
      fun() ->
              %% And for chat: 200 x (2 x 10 + 1) + 3 > 4096.
              Final = protocol_lines(<<"default">>,
                                     #{workload => chat, variant => default, repetition => 1,
                                       params => #{groups => 200, clients_per_group => 10,
                                                   duration_s => 0.1}}),
              ?assertMatch(#{<<"type">> := <<"error">>, <<"kind">> := <<"resource">>,
                             <<"message">> := <<"groups = 200 and clients_per_group = 10 ", _/binary>>},
                           Final)
      end]}.

socket_params(Overrides) ->
    maps:merge(#{mode => echo, size => 1024, total_bytes => 65536, sockets => 2, data => binary,
                 placement => local, check_content => 1, port => 0}, Overrides).

%% The socket workload through the real worker, whose server half is
%% target.toml's serve (two VMs per run: each test gets its own time).
socket_worker_test_() ->
    [{timeout, 60, fun socket_in_every_variant/0},
     {timeout, 60, fun socket_port_in_use/0}].

%% Every variant that declares socket, in both modes and both data types.
socket_in_every_variant() ->
    [?assertMatch(#{<<"type">> := <<"result">>,
                    <<"verify">> := #{<<"messages_sent">> := 128, <<"messages_received">> := 128,
                                      <<"bytes_sent">> := 131072, <<"bytes_received">> := 131072,
                                      <<"content_mismatches">> := 0}},
                  protocol_lines(Variant,
                                 #{workload => socket, variant => Variant, repetition => 1,
                                   params => socket_params(#{mode => Mode, data => Data})}))
     || Variant <- [<<"default">>, <<"single_scheduler">>, <<"active">>, <<"active_n">>],
        {Mode, Data} <- [{echo, binary}, {flow, list}]].

%% A fixed port that is taken: the server says so, the worker relays it.
socket_port_in_use() ->
    {ok, Taken} = gen_tcp:listen(0, [inet]),
    {ok, Port} = inet:port(Taken),
    Final = protocol_lines(<<"default">>,
                           #{workload => socket, variant => default, repetition => 1,
                             params => socket_params(#{port => Port})}),
    ok = gen_tcp:close(Taken),
    ?assertMatch(#{<<"type">> := <<"error">>, <<"kind">> := <<"resource">>,
                   <<"message">> := <<"the server: port ", _/binary>>}, Final).

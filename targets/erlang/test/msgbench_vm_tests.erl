%% The worker in a VM of its own, started as target.toml's run command
%% starts it (the harness's conformance suite drives that very command;
%% these check what only a real VM shows): stdin is read whole and as
%% UTF-8, and stdout carries protocol lines only, even when the VM itself
%% complains.
-module(msgbench_vm_tests).

-include_lib("eunit/include/eunit.hrl").

%% target.toml's run, placeholders filled in: +P 4096, no variant args.
%% The test runs in targets/erlang (make test), where the harness runs workers.
command() ->
    [os:find_executable("erl"), "+P", "4096", "-noshell",
     "-kernel", "logger", "[{handler,default,logger_std_h,#{config=>#{type=>standard_error}}}]",
     "-env", "ERL_CRASH_DUMP_SECONDS", "0",
     "-pa", "ebin", "-s", "msgbench_erlang", "main"].

%% Every stdout line of one worker, and its exit status. stderr (the
%% worker's log) is dropped by the shell.
run_worker(Request) ->
    [Program | Args] = command(),
    Port = open_port({spawn_executable, "/bin/sh"},
                     [{args, ["-c", "exec \"$0\" \"$@\" 2>/dev/null", Program | Args]},
                      binary, exit_status, use_stdio, {line, 1 bsl 20}]),
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

%% hello, then one final line (returned); nothing else, and exit status 0.
final(Request) ->
    {Status, Lines} = run_worker(Request),
    ?assertEqual(0, Status),
    Decoded = [case msgbench_json:decode(Line) of
                   {ok, #{<<"type">> := _} = Message} -> Message;
                   Other -> error({not_a_protocol_line, Line, Other})
               end || Line <- Lines],
    [Hello, Final] = Decoded,
    ?assertMatch(#{<<"type">> := <<"hello">>, <<"target">> := <<"erlang">>,
                   <<"variant">> := <<"default">>}, Hello),
    Final.

ring(Params) ->
    #{workload => ring, variant => default, options => #{message_queue_data => off_heap},
      params => Params, repetition => 1, warmup => false}.

vm_test_() ->
    {timeout, 60,
     [fun() ->
              ?assertMatch(#{<<"type">> := <<"result">>,
                             <<"verify">> := #{<<"hops">> := 10000, <<"laps">> := 10,
                                               <<"links">> := 1000}},
                           final(ring(#{n => 1000, m => 10, payload => <<"BOO!">>})))
      end,
      fun() ->
              %% The longest payload, in characters that take two bytes in
              %% UTF-8: stdin is read whole and decoded as UTF-8.
              Payload = binary:copy(<<16#e9/utf8>>, 65536),
              ?assertMatch(#{<<"type">> := <<"result">>, <<"verify">> := #{<<"hops">> := 20}},
                           final(ring(#{n => 10, m => 2, payload => Payload})))
      end,
      fun() ->
              %% A +P too small for the ring: the worker says so, and nothing
              %% (no "Too many processes" report) reaches stdout.
              ?assertMatch(#{<<"type">> := <<"error">>, <<"kind">> := <<"resource">>},
                           final(ring(#{n => 5000, m => 1, payload => <<>>})))
      end,
      fun() ->
              %% And for chat: 200 x (2 x 10 + 1) + 3 > 4096.
              ?assertMatch(#{<<"type">> := <<"error">>, <<"kind">> := <<"resource">>,
                             <<"message">> := <<"groups = 200 and clients_per_group = 10 ", _/binary>>},
                           final(#{workload => chat, variant => default, options => #{},
                                   repetition => 1,
                                   params => #{groups => 200, clients_per_group => 10,
                                               duration_s => 0.1, think_ms => 0,
                                               listener_delay_ms => 0, message => text,
                                               history => 10, drain_timeout_s => 5}}))
      end]}.

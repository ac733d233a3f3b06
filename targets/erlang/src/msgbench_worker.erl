%% The worker: one measurement per VM, driven by the msgbench protocol
%% (spec/README.md). Started as
%%
%%   erl +P <limit> [variant args] -noshell -pa ebin -s msgbench_worker main
%%
%% it reads one JSON request from stdin, writes JSON lines to stdout
%% (hello, then a result or an error) and halts with status 0. Nothing else
%% may reach stdout: logs go to standard_error, and target.toml points the
%% logger's default handler at standard_error too.
%%
%% The server half of the socket workload is the same code started with
%% `-s msgbench_worker serve` (target.toml's serve): it reads the worker's
%% request from stdin and prints the server's lines (spec/README.md, "Peers").
-module(msgbench_worker).

-export([main/0, handle/2, serve/0, serve/3]).

-export_type([error_kind/0]).

-type error_kind() :: bad_params | unsupported | resource | internal.

-define(TARGET, <<"erlang">>).
-define(UNKNOWN_VARIANT, <<"unknown">>).

%% Workloads this worker implements, and the module for each.
workload_module(<<"ring">>) -> {ok, msgbench_ring_workload};
workload_module(<<"fanin">>) -> {ok, msgbench_fanin_workload};
workload_module(<<"chat">>) -> {ok, msgbench_chat_workload};
workload_module(<<"socket">>) -> {ok, msgbench_socket_workload};
workload_module(_) -> error.

-spec main() -> no_return().
main() ->
    ok = io:setopts(standard_io, [binary, {encoding, unicode}]),
    handle(io:get_line(""), fun emit/1),
    erlang:halt(0).

%% From what stdin gave to the lines to print: hello as soon as the variant
%% is known, then one result or error. Exported so that the tests can drive
%% it without starting a VM.
-spec handle(binary() | string() | eof | {error, term()}, fun((map()) -> ok)) -> ok.
handle(Input, Emit) ->
    {VariantName, Request} = read_request(Input),
    Emit(hello(VariantName)),
    Final = try
                case Request of
                    {ok, Workload, Params} -> run(Workload, VariantName, Params);
                    {error, Kind, Message} -> error_line(Kind, Message)
                end
            catch
                Class:Reason:Stack ->
                    log("worker crashed: ~0p:~0p ~0p", [Class, Reason, Stack]),
                    error_line(internal, io_lib:format("~0p:~0P", [Class, Reason, 20]))
            end,
    Emit(Final).

%% The server half: one request line, then listening, served (or an
%% error) and halt(0). It stops when its stdin closes (the worker is gone),
%% which a process of its own watches.
-spec serve() -> no_return().
serve() ->
    ok = io:setopts(standard_io, [binary, {encoding, unicode}]),
    serve(io:get_line(""), fun emit/1, fun watch_stdin/0),
    erlang:halt(0).

%% From the request line to the server's lines. Exported for the tests.
-spec serve(binary() | string() | eof | {error, term()}, fun((map()) -> ok), fun(() -> term())) -> ok.
serve(Input, Emit, WatchStdin) ->
    Outcome = try
                  case read_request(Input) of
                      {VariantName, {ok, Workload, Params}} ->
                          case prepare(Workload, VariantName, Params) of
                              {ok, Module, Config} ->
                                  {module, Module} = code:ensure_loaded(Module),
                                  case erlang:function_exported(Module, serve, 3) of
                                      true ->
                                          log("serving ~ts/~ts ~ts", [Workload, VariantName,
                                                                     msgbench_json:encode(Params)]),
                                          Module:serve(Config, Emit, WatchStdin);
                                      false ->
                                          {error, unsupported,
                                           ["workload ", Workload, " has no server half"]}
                                  end;
                              {error, _Kind, _Message} = Error ->
                                  Error
                          end;
                      {_VariantName, {error, _Kind, _Message} = Error} ->
                          Error
                  end
              catch
                  Class:Reason:Stack ->
                      log("server crashed: ~0p:~0p ~0p", [Class, Reason, Stack]),
                      {error, internal, io_lib:format("the server crashed: ~0p:~0P", [Class, Reason, 20])}
              end,
    case Outcome of
        ok -> ok;
        {error, Kind, Message} -> Emit(error_line(Kind, Message))
    end.

%% Returns when stdin is closed.
watch_stdin() ->
    case io:get_line("") of
        eof -> eof;
        {error, _} = Error -> Error;
        _Line -> watch_stdin()
    end.

read_request(eof) ->
    {?UNKNOWN_VARIANT, {error, bad_params, "no request: stdin was empty"}};
read_request({error, Reason}) ->
    {?UNKNOWN_VARIANT, {error, internal, io_lib:format("cannot read stdin: ~0p", [Reason])}};
read_request(Line) ->
    case parse_request(iolist_to_binary(Line)) of
        {ok, Workload, VariantName, Params} -> {VariantName, {ok, Workload, Params}};
        {error, VariantName, Message} -> {VariantName, {error, bad_params, Message}}
    end.

parse_request(Line) ->
    case msgbench_json:decode(Line) of
        {ok, #{<<"workload">> := Workload, <<"variant">> := Variant,
               <<"params">> := Params} = Request}
          when is_binary(Workload), is_binary(Variant), Variant =/= <<>>, is_map(Params) ->
            case lists:sort(maps:keys(Request) -- [<<"workload">>, <<"variant">>, <<"params">>,
                                                  <<"repetition">>]) of
                [] -> {ok, Workload, Variant, Params};
                [Extra | _] -> {error, Variant,
                                ["the request has an unknown field ", Extra,
                                 ": it takes workload, variant, params and repetition"]}
            end;
        {ok, Other} ->
            {error, ?UNKNOWN_VARIANT,
             ["the request must be an object with a workload (string), a variant (string) "
              "and params (object), not ", msgbench_params:describe_value(Other)]};
        {error, Reason} ->
            {error, ?UNKNOWN_VARIANT, io_lib:format("the request is not valid JSON: ~0p", [Reason])}
    end.

run(WorkloadName, VariantName, Params) ->
    case prepare(WorkloadName, VariantName, Params) of
        {ok, Module, Config} ->
            log("~ts/~ts ~ts", [WorkloadName, VariantName, msgbench_json:encode(Params)]),
            outcome_line(measure(Module, Config));
        {error, Kind, Message} ->
            error_line(Kind, Message)
    end.

prepare(WorkloadName, VariantName, Params) ->
    case {msgbench_variants:lookup(VariantName), workload_module(WorkloadName)} of
        {error, _} ->
            {error, unsupported,
             ["variant ", VariantName, " is not one of this target's variants: ",
              lists:join(", ", msgbench_variants:names())]};
        {_, error} ->
            {error, unsupported, ["workload ", WorkloadName, " is not implemented by the erlang target"]};
        {{ok, Variant}, {ok, Module}} ->
            case lists:member(WorkloadName, maps:get(workloads, Variant)) of
                false ->
                    {error, unsupported,
                     ["variant ", VariantName, " does not implement workload ", WorkloadName,
                      " (it implements ", lists:join(", ", maps:get(workloads, Variant)), ")"]};
                true ->
                    configure(Module, WorkloadName, VariantName, Variant, Params)
            end
    end.

configure(Module, WorkloadName, VariantName, Variant, Params) ->
    case msgbench_spec:workload(WorkloadName) of
        {error, Message} ->
            {error, internal, Message};
        {ok, #{<<"params">> := Schemas}} ->
            case msgbench_params:validate(WorkloadName, Schemas, Params) of
                {error, Message} ->
                    {error, bad_params, explain_bad_params(Module, Params, Message)};
                {ok, Valid} ->
                    case check_schedulers(VariantName, Variant) of
                        ok ->
                            case Module:configure(Valid, Variant) of
                                {ok, Config} -> {ok, Module, Config};
                                {error, _Kind, _Message} = Error -> Error
                            end;
                        Error ->
                            Error
                    end
            end
    end.

%% A workload module may say more than the schema can about a rejected
%% param (chat: why clients_per_group must be at least 2), through the
%% optional explain_bad_params/2.
explain_bad_params(Module, Params, Message) ->
    {module, Module} = code:ensure_loaded(Module),
    case erlang:function_exported(Module, explain_bad_params, 2) of
        true -> Module:explain_bad_params(Params, Message);
        false -> Message
    end.

%% A variant that stands for a scheduler count must really run with it, or
%% its figures would be stored under the wrong name.
check_schedulers(VariantName, #{schedulers := Wanted}) ->
    Online = erlang:system_info(schedulers_online),
    case Wanted =:= any orelse Wanted =:= Online of
        true -> ok;
        false -> {error, internal,
                  io_lib:format("variant ~ts must run with ~w scheduler(s) (erl +S ~w) "
                                "but this VM has ~w online", [VariantName, Wanted, Wanted, Online])}
    end.

%% The measurement runs in a process of its own: a fresh heap and mailbox
%% (the ring's root is this process), and a crash becomes an internal error.
measure(Module, Config) ->
    Worker = self(),
    {Pid, Monitor} = spawn_monitor(fun() -> Worker ! {self(), measured, Module:measure(Config)} end),
    receive
        {Pid, measured, Outcome} ->
            erlang:demonitor(Monitor, [flush]),
            Outcome;
        {'DOWN', Monitor, process, Pid, Reason} ->
            {error, internal, io_lib:format("the measurement crashed: ~0P", [Reason, 30])}
    end.

outcome_line({ok, Metrics, Verify}) ->
    #{type => result, metrics => Metrics, verify => Verify};
outcome_line({error, Kind, Message}) ->
    error_line(Kind, Message).

hello(VariantName) ->
    #{type => hello, target => ?TARGET, runtime_version => runtime_version(),
      variant => VariantName}.

error_line(Kind, Message) ->
    #{type => error, kind => Kind, message => unicode:characters_to_binary(Message)}.

%% "OTP 25.2.3 / erts-13.1.5"; the full OTP version is only in a file.
runtime_version() ->
    Release = erlang:system_info(otp_release),
    VersionFile = filename:join([code:root_dir(), "releases", Release, "OTP_VERSION"]),
    Otp = case file:read_file(VersionFile) of
              {ok, Text} -> string:trim(Text);
              {error, _} -> Release
          end,
    iolist_to_binary(["OTP ", Otp, " / erts-", erlang:system_info(version)]).

emit(Line) ->
    ok = io:put_chars(standard_io, [msgbench_json:encode(Line), $\n]).

log(Format, Args) ->
    io:format(standard_error, "msgbench_worker: " ++ Format ++ "~n", Args).

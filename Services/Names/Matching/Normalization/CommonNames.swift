/// Names so frequent that two people sharing one says little: agreement on them is weighed as its
/// own level (a simple term-frequency adjustment). Folded; given names in their formal form. The
/// lists are the most frequent names of large populations (English-speaking countries, Spanish-
/// and Portuguese-speaking countries, China, Korea, Vietnam, India, Germany, Russia, the Arab world).
enum CommonNames {
    static let surnames: Set<String> = Set(
        """
        smith johnson williams brown jones garcia miller davis rodriguez martinez hernandez lopez gonzalez wilson \
        anderson thomas taylor moore jackson martin lee perez thompson white harris sanchez clark ramirez lewis \
        robinson walker young allen king wright scott torres nguyen hill flores green adams nelson baker hall \
        rivera campbell mitchell carter roberts gomez phillips evans turner diaz parker cruz edwards collins reyes \
        stewart morris morales murphy cook rogers gutierrez ortiz morgan cooper peterson bailey reed kelly howard \
        ramos kim cox ward richardson watson brooks chavez wood james bennett gray mendoza ruiz hughes price \
        alvarez castillo sanders patel myers long ross foster jimenez singh kumar sharma wang li zhang liu chen \
        yang huang zhao wu zhou xu sun ma zhu hu guo he lin luo park choi jung kang cho yoon jang tran le pham \
        hoang phan vu dang bui do ho ngo duong ly silva santos oliveira souza pereira costa ferreira rodrigues \
        alves muller schmidt schneider fischer weber meyer wagner becker schulz hoffmann ivanov smirnov kuznetsov \
        popov petrov mohamed mohammed ahmed ali hassan hussein khan ibrahim rossi russo ferrari esposito bianchi \
        romano dubois durand leroy moreau laurent simon michel lefebvre
        """.split(separator: " ").map(String.init))

    static let givenNames: Set<String> = Set(
        """
        james john robert michael william david richard joseph thomas charles christopher daniel matthew anthony \
        mark donald steven paul andrew joshua kenneth kevin brian george timothy ronald edward jason jeffrey ryan \
        jacob gary nicholas eric jonathan stephen larry justin scott brandon benjamin samuel gregory alexander \
        frank patrick raymond jack dennis jerry mary patricia jennifer linda elizabeth barbara susan jessica sarah \
        karen lisa nancy betty margaret sandra ashley kimberly emily donna michelle carol amanda dorothy melissa \
        deborah stephanie rebecca sharon laura cynthia kathleen amy angela shirley anna brenda pamela emma nicole \
        helen samantha katherine catherine christine debra rachel carolyn janet maria jose juan carlos luis jorge \
        ana mohammed mohamed muhammad ahmed ali fatima wei jing li ming hui min jun ji ying yan hong lei \
        peter hans klaus anne marie jean pierre michel alexander sergei olga elena natalia ivan andrei dmitri \
        raj amit priya sunil anil rahul
        """.split(separator: " ").map(String.init))
}

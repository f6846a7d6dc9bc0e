/// Names, places and streets the generator draws from, most frequent first (frequencies follow
/// rank, so the head of each list is common and its tail rare).
enum SyntheticLists {
    static let maleNames = WeightedList(
        """
        James Robert John Michael William David Richard Joseph Thomas Charles Christopher Daniel Matthew Anthony \
        Mark Donald Steven Paul Andrew Joshua Kenneth Kevin Brian George Timothy Ronald Edward Jason Jeffrey Ryan \
        Jacob Gary Nicholas Eric Jonathan Stephen Larry Justin Scott Brandon Benjamin Samuel Gregory Alexander \
        Frank Patrick Raymond Jack Dennis Jerry Tyler Aaron José Adam Nathan Henry Douglas Zachary Peter Kyle \
        Ethan Walter Noah Jeremy Christian Keith Roger Terry Gerald Harold Sean Austin Carl Arthur Lawrence Dylan \
        Jesse Jordan Bryan Billy Joe Bruce Gabriel Logan Albert Willie Alan Juan Wayne Elijah Randy Roy Vincent \
        Ralph Eugene Russell Bobby Mason Philip Louis Mohammed Wei Hiroshi Rahul Ahmed Luca François Jürgen \
        Sören Björn Mateo Santiago Ivan Dmitri Olusegun Kwame Tariq Minh Jin Anil Giovanni Pierre Hans Klaus \
        Rafael Diego Emeka Chidi Yusuf Omar Kenji Takeshi Sanjay Vikram Arjun Nikolai Pavel Stefan Lars Niels
        """, exponent: 0.6)

    static let femaleNames = WeightedList(
        """
        Mary Patricia Jennifer Linda Elizabeth Barbara Susan Jessica Sarah Karen Lisa Nancy Betty Margaret Sandra \
        Ashley Kimberly Emily Donna Michelle Carol Amanda Dorothy Melissa Deborah Stephanie Rebecca Sharon Laura \
        Cynthia Kathleen Amy Angela Shirley Anna Brenda Pamela Emma Nicole Helen Samantha Katherine Christine \
        Debra Rachel Carolyn Janet Catherine Maria Heather Diane Ruth Julie Olivia Joyce Virginia Victoria Kelly \
        Lauren Christina Joan Evelyn Judith Megan Andrea Cheryl Hannah Jacqueline Martha Gloria Teresa Ann Sara \
        Madison Frances Kathryn Janice Jean Abigail Alice Judy Sophia Grace Denise Amber Doris Marilyn Danielle \
        Beverly Isabella Theresa Diana Natalie Brittany Charlotte Marie Kayla Alexis Lori Zoë Chloé Renée Inés \
        Sofía Ana Lucía Fatima Aisha Mei Yuki Priya Ananya Olga Natalia Svetlana Ingrid Astrid Françoise Margit \
        Agnieszka Chiamaka Ngozi Amara Leila Noor Hana Sakura Lakshmi Deepika Elena Irina Greta Annika Camille
        """, exponent: 0.6)

    static let lastNames = WeightedList(
        """
        Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez Gonzalez Wilson \
        Anderson Thomas Taylor Moore Jackson Martin Lee Perez Thompson White Harris Sanchez Clark Ramirez Lewis \
        Robinson Walker Young Allen King Wright Scott Torres Nguyen Hill Flores Green Adams Nelson Baker Hall \
        Rivera Campbell Mitchell Carter Roberts Gomez Phillips Evans Turner Diaz Parker Cruz Edwards Collins Reyes \
        Stewart Morris Morales Murphy Cook Rogers Gutierrez Ortiz Morgan Cooper Peterson Bailey Reed Kelly Howard \
        Ramos Kim Cox Ward Richardson Watson Brooks Chavez Wood James Bennett Gray Mendoza Ruiz Hughes Price \
        Alvarez Castillo Sanders Patel Myers Long Ross Foster Jimenez Powell Jenkins Perry Russell Sullivan Bell \
        Coleman Butler Henderson Barnes Gonzales Fisher Vasquez Simmons Romero Jordan Patterson Alexander Hamilton \
        Graham Reynolds Griffin Wallace Moreno West Cole Hayes Bryant Herrera Gibson Ellis Tran Medina Aguilar \
        Stevens Murray Ford Castro Marshall Owens Harrison Fernandez McDonald Woods Washington Kennedy Wells \
        Vargas Henry Chen Freeman Webb Tucker Guzman Burns Crawford Olson Simpson Porter Hunter Gordon Mendez \
        Silva Shaw Snyder Mason Dixon Muñoz Hunt Hicks Holmes Palmer Wagner Black Robertson Boyd Rose Stone \
        Salazar Fox Warren Mills Meyer Rice Schmidt Garza Daniels Ferguson Nichols Stephens Soto Weaver Ryan \
        Gardner Payne Grant Dunn Kelley Spencer Hawkins Arnold Pierce Vazquez Hansen Peters Santos Hart Bradley \
        Knight Elliott Cunningham Duncan Armstrong Hudson Carroll Lane Riley Andrews Alvarado Ray Delgado Berry \
        Perkins Hoffman Johnston Matthews Peña Richards Willis Carpenter Lawrence Sandoval Müller Schneider \
        Fischer Weber Becker Schulz Wang Li Zhang Liu Yang Huang Zhao Wu Zhou Xu Sun Ma Singh Kumar Sharma Gupta \
        Mehta Iyer Reddy Khan Ahmed Hassan Ali Ibrahim Mahmoud Okafor Okonkwo Adeyemi Mensah Tanaka Suzuki Sato \
        Takahashi Watanabe Park Choi Jung Kang Pham Hoang Phan Vu Dang Ivanov Smirnov Kuznetsov Popov Petrov \
        Rossi Russo Ferrari Esposito Bianchi Romano Dubois Durand Lefèvre Moreau Laurent Girard Nowak Kowalski \
        Wiśniewski Novák Horváth Nagy Jansen Bakker Visser Janssen Lindqvist Johansson Andersson Nilsson \
        O'Brien O'Connor McCarthy Fitzgerald Gallagher Doherty Kavanagh Van_der_Berg De_Jong Da_Silva \
        Abernathy Quigley Thistlewood Pemberton Featherstone Winterbottom Ravensworth Blackwood Ashdown Holloway
        """, exponent: 0.5)

    static let cyrillicFirstNames = WeightedList("Иван Сергей Алексей Дмитрий Андрей Ольга Наталья Елена Татьяна Анна")
    static let cyrillicLastNames = WeightedList("Иванов Смирнов Кузнецов Попов Васильев Петров Соколов Михайлов Новиков Федоров")

    static let streets = WeightedList(
        """
        Main Oak Pine Maple Cedar Elm Washington Lake Hill Park Walnut Spruce Ridge Church Willow Mill Sunset \
        Jackson Lincoln Highland River Franklin Chestnut Meadow Forest Jefferson Madison Adams Dogwood Birch \
        Cherry Spring Valley Center North South Prospect Railroad Locust Hickory Poplar Laurel Magnolia Holly \
        Sycamore Aspen Juniper Harbor Bay Victoria Albert Queen King Station Bridge Mill Green Orchard Castle
        """, exponent: 0.6)

    static let streetTypes = ["Street", "Avenue", "Road", "Lane", "Drive", "Court", "Place", "Boulevard"]

    /// Cities per phone region, most populous first.
    static let cities: [String: WeightedList] = [
        "US": WeightedList(
            """
            New_York Los_Angeles Chicago Houston Phoenix Philadelphia San_Antonio San_Diego Dallas Austin \
            Jacksonville Columbus Charlotte Indianapolis Seattle Denver Boston Nashville Portland Memphis \
            Baltimore Milwaukee Albuquerque Tucson Fresno Sacramento Atlanta Omaha Raleigh Miami Springfield \
            Madison Reno Boise Spokane Tacoma Eugene Salem Dayton Akron
            """),
        "GB": WeightedList(
            "London Birmingham Manchester Glasgow Leeds Liverpool Bristol Sheffield Edinburgh Cardiff Leicester York"),
        "DE": WeightedList("Berlin Hamburg München Köln Frankfurt Stuttgart Düsseldorf Leipzig Dresden Nürnberg"),
        "FR": WeightedList("Paris Marseille Lyon Toulouse Nice Nantes Strasbourg Montpellier Bordeaux Lille"),
        "IN": WeightedList("Mumbai Delhi Bengaluru Hyderabad Chennai Kolkata Pune Ahmedabad Jaipur Lucknow"),
        "AU": WeightedList("Sydney Melbourne Brisbane Perth Adelaide Canberra Hobart Darwin"),
    ]

    /// Rarer surnames and towns made of two parts (Ash + worth, Green + ville): real populations have
    /// a long tail of names and places, and without it blocks grow unrealistically with the data.
    static let surnameHeads = """
        Ash Black Brad Brook Cal Clay Cold Cran Dal Dun East Elm Fair Fern Gar Glen Gold Hal Hart Hay Hol Kings \
        Lang Lock Mar Mid Mont New North Oak Pem Ray Red Rock Rush Sal Shel Stan Sut Thorn Wal West Whit Win Wood
        """.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
    static let surnameTails = """
        bury by croft dale den field ford gate ham hill hurst ington land ley lock man mere more ridge shaw ston \
        ton wick well worth wood
        """.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
    static let townTails = [
        "ville", "field", "ton", "wood", "dale", "port", "bridge", "ford", "haven", "brook", "mouth", "stead",
    ]

    static let regions = ["US", "GB", "DE", "FR", "IN", "AU"]
    static let regionWeights: [Double] = [0.6, 0.75, 0.83, 0.9, 0.95, 1.0]

    static let emailDomains = WeightedList(
        "gmail.com yahoo.com hotmail.com outlook.com icloud.com aol.com proton.me gmx.de orange.fr example.org acme.com")
}
